// The body of the soak's /healthz probe thread (started by healthz-watch.ts): a GET every `intervalMs` to the
// gateway the soak last named, on an event loop of its own, so that the soak's busy main thread does not delay a
// probe and pass its own lag off as the gateway's. Its samples go back when the soak asks it to stop.
import { parentPort, workerData } from "node:worker_threads";

/** One probe: when it began and ended (epoch ms), and whether /healthz answered 200. */
export interface ProbeSample {
  startedAt: number;
  endedAt: number;
  ms: number;
  ok: boolean;
}

const port = parentPort;
const { intervalMs } = workerData as { intervalMs: number };
let origin: string | undefined;
let probing = true;
const samples: ProbeSample[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

port?.on("message", (message: { origin?: string; stop?: boolean }) => {
  if (message.origin !== undefined) origin = message.origin;
  if (message.stop) probing = false;
});

while (probing) {
  const started = performance.now();
  if (origin !== undefined) {
    const sample = { startedAt: Date.now(), endedAt: 0, ms: 0, ok: false };
    try {
      const response = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      sample.ok = response.status === 200;
    } catch {
      sample.ok = false;
    }
    sample.ms = performance.now() - started;
    sample.endedAt = Date.now();
    samples.push(sample);
  }
  await sleep(intervalMs - (performance.now() - started));
}
port?.postMessage(samples);
port?.close();
