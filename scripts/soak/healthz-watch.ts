import { Worker } from "node:worker_threads";
import type { ProbeSample } from "./healthz-probe.js";

/** What the /healthz probe of the whole run saw, probes that overlapped a kill set apart. */
export interface HealthzFigures {
  /** Latencies (ms) of the probes answered 200 outside the kills. */
  latencies: number[];
  /** Probes outside the kills that failed, or took past 5 s. */
  failures: number;
  /** Probes that overlapped a kill and its restart: not judged. */
  duringKills: number;
  intervalMs: number;
}

/** A span of epoch ms in which the gateway was being killed and restarted. */
export interface Outage {
  from: number;
  to: number;
}

/**
 * Probes /healthz every `intervalMs` from a worker thread for as long as the soak runs; `follow` names each new
 * gateway process, `stop` ends the probe and sorts its samples. tsx's hooks do not reach a worker on their own on
 * Node 20, so the worker registers them before it imports the probe.
 */
export function watchHealthz(intervalMs: number) {
  const probe = new URL("./healthz-probe.ts", import.meta.url).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const worker = new Worker(
    `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(probe)}); });`,
    { eval: true, workerData: { intervalMs } },
  );
  const samples = new Promise<ProbeSample[]>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    follow(origin: string): void {
      worker.postMessage({ origin });
    },
    async stop(outages: readonly Outage[]): Promise<HealthzFigures> {
      worker.postMessage({ stop: true });
      const all = await samples;
      await worker.terminate();
      // A probe sent to a process just killed, or before its successor was named, failed because of the kill.
      const overlaps = (sample: ProbeSample) =>
        outages.some((outage) => sample.startedAt <= outage.to + 2 * intervalMs && sample.endedAt >= outage.from);
      const judged = all.filter((sample) => !overlaps(sample));
      return {
        latencies: judged.filter((sample) => sample.ok).map((sample) => sample.ms),
        failures: judged.filter((sample) => !sample.ok).length,
        duringKills: all.length - judged.length,
        intervalMs,
      };
    },
  };
}
