// Run by sqlite-store.test.ts in a child process: opens the store, prints "ready", waits for a line on stdin, then
// for bucket 1, 2 … <buckets> in turn tries <tries> charges of 1 to two counters of the bucket at once (`requests`,
// cap 10, and `chars`, cap 1,000,000), and prints how many charges of each bucket were admitted. Many buckets in a
// row make the processes overlap often enough that a charge past a cap, or half a charge, would show.
import { sqliteStore } from "../../src/runtime/node/sqlite-store.js";

const [path, buckets, tries] = process.argv.slice(2);
if (path === undefined || buckets === undefined || tries === undefined) {
  throw new Error("Usage: charge-in-child-process.ts <database> <buckets> <tries>");
}

const store = sqliteStore(path);
process.stdout.write("ready\n");
process.stdin.once("data", async () => {
  const admitted: number[] = [];
  for (let bucket = 1; bucket <= Number(buckets); bucket += 1) {
    let count = 0;
    for (let attempt = 0; attempt < Number(tries); attempt += 1) {
      const charged = await store.chargeCounters([
        { scope: "key:shared", name: "requests", bucket, amount: 1, cap: 10, expires: 9_000 },
        { scope: "key:shared", name: "chars", bucket, amount: 1, cap: 1_000_000, expires: 9_000 },
      ]);
      if (charged !== undefined) count += 1;
    }
    admitted.push(count);
  }
  await store.close();
  process.stdout.write(`admitted ${JSON.stringify(admitted)}\n`);
});
