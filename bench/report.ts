import { cpus, loadavg, release, totalmem } from "node:os";
import type { ProfileSummary } from "./cpu-profile.js";
import type { EventLoopFigures } from "./large-schemas.js";
import { type LoadSample, median, type Target } from "./load.js";
import { type MicroResult, microTable } from "./micro.js";

/** The machine a run measured, as the results file records it. */
export interface Machine {
  cpuModel: string;
  cpus: number;
  memoryGiB: number;
  node: string;
  kernel: string;
  /** 1-minute load average before the run: other work on the machine shares its CPUs. */
  loadAverageBefore: number;
}

export function machine(): Machine {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    cpus: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: `${process.platform} ${release()}`,
    loadAverageBefore: loadavg()[0] ?? 0,
  };
}

/** One target at one concurrency, over every round. */
export interface LoadFigure {
  target: string;
  connections: number;
  rounds: number;
  /** Mean requests/s over the rounds, and the lowest and highest round. */
  requestsPerSecond: number;
  requestsPerSecondMin: number;
  requestsPerSecondMax: number;
  /** Median over the rounds of each round's percentile, ms. */
  p50: number;
  p99: number;
  /** p50 minus direct's p50 at the same concurrency, ms. */
  addedP50: number | undefined;
  addedP99: number | undefined;
  cpuMsPerRequest: number | undefined;
  upstreamCpuMsPerRequest: number | undefined;
  rssMiB: number | undefined;
  failed: number;
  /** Mean cores busy with other work on the machine during the rounds (see LoadSample). */
  foreignCores: number | undefined;
  loadGeneratorCpuMsPerRequest: number | undefined;
}

/** Folds the rounds of each target and concurrency into one figure. */
export function aggregate(samples: ReadonlyArray<LoadSample & { target: string }>): LoadFigure[] {
  const groups = new Map<string, Array<LoadSample & { target: string }>>();
  for (const sample of samples) {
    const key = `${sample.target} ${sample.connections}`;
    groups.set(key, [...(groups.get(key) ?? []), sample]);
  }
  const figures = [...groups.values()].map((group): LoadFigure => {
    const first = group[0]!;
    const rates = group.map((sample) => sample.requestsPerSecond);
    const ok = group.reduce((sum, sample) => sum + sample.ok, 0);
    const weighted = (value: (sample: LoadSample) => number | undefined) =>
      group.some((sample) => value(sample) === undefined) || ok === 0
        ? undefined
        : group.reduce((sum, sample) => sum + (value(sample) ?? 0) * sample.ok, 0) / ok;
    const rss = group.map((sample) => sample.rssMiB).filter((value) => value !== undefined);
    return {
      target: first.target,
      connections: first.connections,
      rounds: group.length,
      requestsPerSecond: rates.reduce((sum, rate) => sum + rate, 0) / rates.length,
      requestsPerSecondMin: Math.min(...rates),
      requestsPerSecondMax: Math.max(...rates),
      p50: median(group.map((sample) => sample.p50)),
      p99: median(group.map((sample) => sample.p99)),
      addedP50: undefined,
      addedP99: undefined,
      cpuMsPerRequest: weighted((sample) => sample.cpuMsPerRequest),
      upstreamCpuMsPerRequest: weighted((sample) => sample.upstreamCpuMsPerRequest),
      rssMiB: rss.length === 0 ? undefined : Math.max(...rss),
      failed: group.reduce((sum, sample) => sum + sample.failed, 0),
      foreignCores: mean(group.map((sample) => sample.foreignCores)),
      loadGeneratorCpuMsPerRequest: weighted((sample) => sample.loadGeneratorCpuMsPerRequest),
    };
  });
  for (const figure of figures) {
    const direct = figures.find((other) => other.target === "direct" && other.connections === figure.connections);
    if (direct === undefined || figure.target === "direct") continue;
    figure.addedP50 = figure.p50 - direct.p50;
    figure.addedP99 = figure.p99 - direct.p99;
  }
  return figures;
}

function mean(values: Array<number | undefined>): number | undefined {
  const known = values.filter((value) => value !== undefined);
  return known.length === 0 ? undefined : known.reduce((sum, value) => sum + value, 0) / known.length;
}

/** promptgate's requests/s (or those of target `of`) over another target's at one concurrency. */
export function ratio(
  figures: readonly LoadFigure[],
  over: string,
  connections: number,
  of = "promptgate",
): number | undefined {
  const find = (target: string) =>
    figures.find((figure) => figure.target === target && figure.connections === connections)?.requestsPerSecond;
  const promptgate = find(of);
  const other = find(over);
  return promptgate === undefined || other === undefined ? undefined : promptgate / other;
}

/** The CPU per request of target `of` over that of target `over`, at one concurrency. */
export function cpuRatio(figures: readonly LoadFigure[], over: string, connections: number, of = "promptgate") {
  const find = (target: string) =>
    figures.find((figure) => figure.target === target && figure.connections === connections)?.cpuMsPerRequest;
  const mine = find(of);
  const other = find(over);
  return mine === undefined || other === undefined ? undefined : mine / other;
}

/** The RSS of a fresh gateway sampled every `every` requests. */
export interface RssSeries {
  every: number;
  samplesMiB: number[];
  /** V8's used heap right after a full GC, taken just after each RSS sample: what is really kept alive. */
  liveHeapMiB: number[];
  requestsPerSecond: number;
  failed: number;
  /** The last sample over the second one (the one at 2 × `every`): flat when within 15 %. */
  growth: number;
  flat: boolean;
}

/** Everything one run measured. */
export interface RunResults {
  date: string;
  command: string;
  machine: Machine;
  /** The commit measured, and whether src/ had changes not committed yet. */
  source: { commit: string; srcModified: boolean; against?: string };
  loadAverageAfter: number;
  settings: Record<string, unknown>;
  targets: Array<Pick<Target, "key" | "label"> & { peakRssMiB?: number; note?: string }>;
  skipped: Array<{ target: string; reason: string }>;
  load: LoadFigure[];
  ratios: Array<{
    connections: number;
    promptgateOverBare?: number;
    promptgateOverPortkey?: number;
    /** promptgate on its SQLite store over the bare proxy. */
    sqliteOverBare?: number;
    /** With `--against DIR`: promptgate's CPU per request over that of the other checkout's promptgate. */
    cpuOverAgainst?: number;
  }>;
  rss: RssSeries | undefined;
  /** The event loop's delay while large new response schemas arrive beside the load test's call. */
  eventLoop?: EventLoopFigures;
  /** Requests per second of promptgate on SQLite with one worker process and with two, and their ratio. */
  workers?: { connections: number; oneWorker: number; twoWorkers: number; ratio: number };
  /** CPU per request without metrics, with them, and with them and tracing; metrics' and tracing's cost as ratios. */
  observability?: {
    connections: number;
    cpuMsPerRequest: { metricsOff: number; metricsOn: number; metricsAndTracing: number };
    metricsCost: number;
    tracingCost: number;
  };
  profile: ProfileSummary | undefined;
  micro: MicroResult[];
}

const fixed = (value: number | undefined, digits: number) => (value === undefined ? "–" : value.toFixed(digits));

/** The run's tables in Markdown. */
export function markdown(results: RunResults): string {
  const labels = new Map(results.targets.map((target) => [target.key, target.label]));
  const load = results.load.map(
    (figure) =>
      `| ${labels.get(figure.target) ?? figure.target} | ${figure.connections} | ${figure.requestsPerSecond.toFixed(0)} ` +
      `(${figure.requestsPerSecondMin.toFixed(0)}–${figure.requestsPerSecondMax.toFixed(0)}) | ${fixed(figure.p50, 2)} | ` +
      `${fixed(figure.p99, 2)} | ${fixed(figure.addedP50, 2)} | ${fixed(figure.addedP99, 2)} | ${fixed(figure.cpuMsPerRequest, 3)} | ` +
      `${fixed(figure.rssMiB, 0)} | ${figure.failed} | ${fixed(figure.foreignCores, 2)} |`,
  );
  const ratios = results.ratios.map(
    (row) =>
      `| ${row.connections} | ${fixed(row.promptgateOverBare, 2)} | ${fixed(row.promptgateOverPortkey, 2)} | ${fixed(row.sqliteOverBare, 2)} | ${fixed(row.cpuOverAgainst, 3)} |`,
  );
  const rss = results.rss;
  const lines = [
    `Run ${results.date}: \`${results.command}\` on ${results.machine.cpus} × ${results.machine.cpuModel}, ` +
      `${results.machine.memoryGiB} GiB, Node ${results.machine.node}, commit ${results.source.commit.slice(0, 12)}${results.source.srcModified ? " with src/ modified" : ""} (load average ${results.machine.loadAverageBefore.toFixed(2)} before, ${results.loadAverageAfter.toFixed(2)} after).`,
    "",
    "| target | conns | req/s mean (min–max of rounds) | p50 ms | p99 ms | added p50 ms | added p99 ms | CPU ms/req | peak RSS MiB | failed | other load (cores) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...load,
    "",
    "| conns | promptgate / bare proxy | promptgate / Portkey | promptgate on SQLite / bare proxy | CPU/req: promptgate / `--against` |",
    "|---:|---:|---:|---:|---:|",
    ...ratios,
    "",
    ...results.skipped.map((skip) => `Skipped ${skip.target}: ${skip.reason}`),
    results.observability === undefined
      ? ""
      : `Observability at ${results.observability.connections} connections, CPU per request: metrics off ${results.observability.cpuMsPerRequest.metricsOff.toFixed(3)} ms, ` +
        `on ${results.observability.cpuMsPerRequest.metricsOn.toFixed(3)} ms (× ${results.observability.metricsCost.toFixed(3)}), ` +
        `with tracing ${results.observability.cpuMsPerRequest.metricsAndTracing.toFixed(3)} ms (× ${results.observability.tracingCost.toFixed(3)} over metrics alone).`,
    results.workers === undefined
      ? ""
      : `PROMPTGATE_WORKERS on SQLite at ${results.workers.connections} connections: one worker ${results.workers.oneWorker.toFixed(0)} req/s, ` +
        `two workers ${results.workers.twoWorkers.toFixed(0)} req/s, ratio ${results.workers.ratio.toFixed(2)} ` +
        `(${results.machine.cpus} cores shared with the load generator and the fake upstream).`,
    rss === undefined
      ? ""
      : `RSS of a fresh promptgate every ${rss.every} requests (MiB): ${rss.samplesMiB.map((value) => value.toFixed(0)).join(", ")}; ` +
        `last / at ${2 * rss.every} = ${rss.growth.toFixed(3)} (${rss.flat ? "flat" : "not flat"}), ${rss.requestsPerSecond.toFixed(0)} req/s, ${rss.failed} failed. ` +
        `Live heap after a full GC (MiB): ${rss.liveHeapMiB.map((value) => value.toFixed(1)).join(", ")}.`,
    "",
    results.eventLoop === undefined ? "" : eventLoopLine(results.eventLoop),
    "",
    microTable(results.micro),
  ];
  if (results.profile !== undefined) {
    const profile = results.profile;
    lines.push(
      "",
      `CPU profile of promptgate at 64 connections: ${profile.samples} samples over ${profile.seconds.toFixed(1)} s.`,
      "",
      "| top frames by self time | self % | total % |",
      "|---|---:|---:|",
      ...profile.topSelf.map(
        (frame) => `| \`${frame.frame}\` | ${frame.selfPercent.toFixed(1)} | ${frame.totalPercent.toFixed(1)} |`,
      ),
      "",
      "| promptgate frames by total time | self % | total % |",
      "|---|---:|---:|",
      ...profile.topPromptgate.map(
        (frame) => `| \`${frame.frame}\` | ${frame.selfPercent.toFixed(1)} | ${frame.totalPercent.toFixed(1)} |`,
      ),
      "",
      `Self time by area: ${profile.byArea
        .slice(0, 12)
        .map((area) => `${area.area} ${area.selfPercent.toFixed(1)} %`)
        .join(", ")}.`,
    );
  }
  return lines.join("\n");
}

/** The event-loop measurement in one sentence: the loop's delay with and without large new schemas. */
function eventLoopLine(figures: EventLoopFigures): string {
  const { baseline, withLargeSchemas: large } = figures;
  const loop = (window: EventLoopFigures["baseline"]) =>
    `p50 ${window.loop.p50.toFixed(1)}, p99 ${window.loop.p99.toFixed(1)}, max ${window.loop.max.toFixed(1)} ms; ` +
    `traffic p99 ${window.trafficP99Ms.toFixed(1)} ms at ${window.trafficRequestsPerSecond.toFixed(0)} req/s`;
  const statuses = Object.entries(large.statuses)
    .map(([status, count]) => `${count} × ${status}`)
    .join(", ");
  return (
    `Event-loop delay of promptgate at ${figures.connections} connections over ${figures.seconds} s: alone ${loop(baseline)}; ` +
    `while ${figures.schemas} new schemas of ${figures.schemaChars.min}–${figures.schemaChars.max} characters arrived ` +
    `(${statuses}, slowest ${large.slowestSchemaCallMs.toFixed(0)} ms) ${loop(large)}.`
  );
}
