// Preloaded into the soak's gateway (`node --import tsx --import ./scripts/soak/loop-delay-preload.ts`, see
// loop-delay.ts): it samples the serving thread's event-loop delay, starts over on SIGUSR2 (sent once the process
// listens, so that loading the modules is not counted), and every second writes the delay since then to
// SOAK_LOOP_DIR/<pid>.json. A process the soak kills leaves its figures up to its last second.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const directory = process.env.SOAK_LOOP_DIR;
if (directory !== undefined && directory !== "") {
  const resolutionMs = 5;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let since = Date.now();
  process.on("SIGUSR2", () => {
    histogram.reset();
    since = Date.now();
  });
  const file = join(directory, `${process.pid}.json`);
  // A sample is the time between two ticks of the timer: what exceeds its period is the block.
  const blockMs = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - resolutionMs);
  const write = () => {
    const figures = {
      since,
      at: Date.now(),
      samples: histogram.count,
      p50: blockMs(histogram.percentile(50)),
      p99: blockMs(histogram.percentile(99)),
      p999: blockMs(histogram.percentile(99.9)),
      max: blockMs(histogram.max),
    };
    writeFileSync(`${file}.partial`, JSON.stringify(figures));
    renameSync(`${file}.partial`, file);
  };
  setInterval(write, 1_000).unref();
  process.on("exit", write);
}
