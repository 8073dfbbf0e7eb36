import autocannon, { type Result } from "autocannon";
import { cpuSeconds, machineCpuSeconds, memoryMiB } from "./processes.js";

/** One HTTP target of the load test. */
export interface Target {
  /** Short key: direct, bare, promptgate, portkey. */
  key: string;
  label: string;
  url: string;
  headers: Record<string, string>;
  /** The process whose CPU and memory are the target's own. */
  pid: number;
}

/** What one load run of one target measured. */
export interface LoadSample {
  connections: number;
  seconds: number;
  /** Responses with a 2xx status. */
  ok: number;
  /** Responses with another status, and connection errors or timeouts. */
  failed: number;
  requestsPerSecond: number;
  /** Latency percentiles in milliseconds, from every response's own time (not autocannon's 1 ms buckets). */
  p50: number;
  p99: number;
  /** CPU seconds the target's process used during the run, per 2xx response, in milliseconds. */
  cpuMsPerRequest: number | undefined;
  /** CPU of the fake upstream during the run, per 2xx response, in milliseconds. */
  upstreamCpuMsPerRequest: number | undefined;
  /** Highest resident memory of the target's process sampled during the run, MiB. */
  rssMiB: number | undefined;
  /** CPU of the load generator (this process) per 2xx response, ms. */
  loadGeneratorCpuMsPerRequest: number;
  /**
   * Cores kept busy during the run by everything else on the machine (other users' work), and cores
   * stolen by the hypervisor: what this run had to share its CPUs with.
   */
  foreignCores: number | undefined;
  stolenCores: number | undefined;
}

/** How long a run lasts: a duration in seconds or a number of requests. */
export type LoadSize = { seconds: number } | { requests: number };

/** Runs autocannon against one target and measures its latency, CPU and memory. */
export async function runLoad(
  target: Target,
  body: Buffer,
  connections: number,
  size: LoadSize,
  upstreamPid: number,
): Promise<LoadSample> {
  let latencies = new Float64Array(65_536);
  let count = 0;
  let rss: number | undefined;
  const sampleRss = () => {
    const memory = memoryMiB(target.pid);
    if (memory !== undefined) rss = Math.max(rss ?? 0, memory.rss);
  };
  const sampler = setInterval(sampleRss, 250);
  const cpuBefore = cpuSeconds(target.pid);
  const upstreamBefore = cpuSeconds(upstreamPid);
  const machineBefore = machineCpuSeconds();
  const generatorBefore = process.cpuUsage();
  const started = performance.now();
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: "POST",
        headers: { "content-type": "application/json", ...target.headers },
        body,
        connections,
        timeout: 10,
        ...("seconds" in size ? { duration: size.seconds } : { amount: size.requests }),
      },
      (error, done) => (error === null ? resolve(done) : reject(error)),
    );
    instance.on("response", (_client, statusCode, _bytes, ms) => {
      if (statusCode < 200 || statusCode > 299) return;
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = ms;
    });
  });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  sampleRss();
  const cpuAfter = cpuSeconds(target.pid);
  const upstreamAfter = cpuSeconds(upstreamPid);
  const machineAfter = machineCpuSeconds();
  const generator = process.cpuUsage(generatorBefore);
  const generatorSeconds = (generator.user + generator.system) / 1e6;
  const ownSeconds =
    generatorSeconds +
    ((cpuAfter ?? 0) - (cpuBefore ?? 0)) +
    (target.pid === upstreamPid ? 0 : (upstreamAfter ?? 0) - (upstreamBefore ?? 0));
  const sorted = latencies.subarray(0, count).sort();
  const perRequest = (before: number | undefined, after: number | undefined) =>
    before === undefined || after === undefined || count === 0 ? undefined : ((after - before) * 1000) / count;
  return {
    connections,
    seconds,
    ok: count,
    failed: result.non2xx + result.errors,
    requestsPerSecond: count / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    cpuMsPerRequest: perRequest(cpuBefore, cpuAfter),
    upstreamCpuMsPerRequest: perRequest(upstreamBefore, upstreamAfter),
    rssMiB: rss,
    loadGeneratorCpuMsPerRequest: count === 0 ? Number.NaN : (generatorSeconds * 1000) / count,
    foreignCores:
      machineBefore === undefined || machineAfter === undefined
        ? undefined
        : Math.max(0, machineAfter.busy - machineBefore.busy - ownSeconds) / seconds,
    stolenCores:
      machineBefore === undefined || machineAfter === undefined
        ? undefined
        : (machineAfter.steal - machineBefore.steal) / seconds,
  };
}

/** The median of values (the mean of the middle two for an even count; NaN when there are none). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  if (sorted.length % 2 === 1) return sorted[middle] as number;
  return ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

/** The nearest-rank percentile of sorted values (NaN when there are none). */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
