// Preloaded into the gateway of the RSS check (`node --expose-gc --import tsx --import ./bench/heap-probe.ts`): on
// SIGUSR2 it runs a full garbage collection and appends the live heap to BENCH_HEAP_FILE, so that a growing RSS can
// be told apart from a growing live heap (a leak).
import { appendFileSync } from "node:fs";

const file = process.env.BENCH_HEAP_FILE;
if (file !== undefined && file !== "") {
  process.on("SIGUSR2", () => {
    globalThis.gc?.();
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ rss, heapUsed, heapTotal, external, arrayBuffers })}\n`);
  });
}
