// Run by sqlite-store.test.ts in a child process: opens the store, prints "ready", waits for a line on stdin,
// then freezes its own sha256 for case-1, case-2 … case-<count> in turn and prints the sha256s the store returned.
// Many cases in a row make the processes overlap often enough that a racy freeze would show.
import { sqliteStore } from "../../src/runtime/node/sqlite-store.js";

const [path, sha256, count] = process.argv.slice(2);
if (path === undefined || sha256 === undefined || count === undefined) {
  throw new Error("Usage: freeze-in-child-process.ts <database> <sha256> <count>");
}

const store = sqliteStore(path);
process.stdout.write("ready\n");
process.stdin.once("data", async () => {
  const frozen: string[] = [];
  for (let index = 1; index <= Number(count); index += 1) {
    frozen.push((await store.freezeCasePolicy(`case-${index}`, "investigation.bounded", sha256)).sha256);
  }
  await store.close();
  process.stdout.write(`frozen ${JSON.stringify(frozen)}\n`);
});
