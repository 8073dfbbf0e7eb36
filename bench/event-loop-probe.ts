// Preloaded into the gateway of the event-loop measurement (`node --import tsx --import ./bench/event-loop-probe.ts`):
// it samples the event loop's delay all the time, and on SIGUSR2 appends the delay since the last report (p50, p99,
// max in ms) to BENCH_LOOP_FILE and starts over, so that the bench reads one window at a time.
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.BENCH_LOOP_FILE;
if (file !== undefined && file !== "") {
  // A 5 ms timer: a stall shows up to within 5 ms, and sampling costs nothing a load test could see.
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  process.on("SIGUSR2", () => {
    const ms = (nanoseconds: number) => nanoseconds / 1e6;
    const window = {
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      samples: histogram.count,
    };
    histogram.reset();
    appendFileSync(file, `${JSON.stringify(window)}\n`);
  });
}
