import { loadAnswerFloor, loadRequestFloor, type MicroResult, wholeCall, wholeCallHarness } from "./micro.js";
import { type RunResults, ratio } from "./report.js";

/** One target of the per-call cost issue (21) with the figure this run measured. */
export interface Verdict {
  target: string;
  measured: string;
  met: boolean | undefined;
}

const micro = (results: RunResults, name: string) => results.micro.find((result) => result.name === name);
const load = (results: RunResults, target: string, connections: number) =>
  results.load.find((figure) => figure.target === target && figure.connections === connections);

/** Each per-call cost target, judged on this run's figures (undefined where the run could not measure it). */
export function verdicts(results: RunResults): Verdict[] {
  const overBare = ratio(results.load, "bare", 64);
  // The floor's work done for real (b″): what a gateway that only parses the request and validates the answer reaches.
  const floorOverBare = ratio(results.load, "bare", 64, "floor");
  const overPortkey = ratio(results.load, "portkey", 64);
  // The floor of the work any gateway that parses the request and validates the answer does (this run's medians).
  const floorRequest = micro(results, loadRequestFloor)?.p50;
  const floorAnswer = micro(results, loadAnswerFloor)?.p50;
  const floor = floorRequest === undefined || floorAnswer === undefined ? undefined : floorRequest + floorAnswer;
  const bareCpu = load(results, "bare", 64)?.cpuMsPerRequest;
  const ownCpu = load(results, "promptgate", 64)?.cpuMsPerRequest;
  const cpuBound = bareCpu === undefined || floor === undefined ? undefined : bareCpu + floor + 0.15;
  const ceiling = bareCpu === undefined || floor === undefined ? undefined : bareCpu / (bareCpu + floor);
  // The gateway's own work without sockets: a whole call through the app in process, less the harness's part.
  const whole = micro(results, wholeCall);
  const harness = micro(results, wholeCallHarness);
  const inProcess =
    whole === undefined || harness === undefined
      ? ""
      : `; in process, without sockets, a call costs ${(whole.mean - harness.mean).toFixed(3)} ms (mean; p50 ${(whole.p50 - harness.p50).toFixed(3)}) above the harness${ownAllocation(whole, harness)}`;
  const bareAdded = load(results, "bare", 1)?.addedP50;
  const ownAdded = load(results, "promptgate", 1)?.addedP50;
  const floorAdded = load(results, "floor", 1)?.addedP50;
  const megabyte = micro(results, "parseCall + measure, 1 MB request");
  const tenMegabytes = micro(results, "parseCall + measure, 10 MB request");
  const cached = micro(results, "validate 10 KB answer, cached validator");
  // Judged on medians: the machine is shared, and a mean takes in every pause another process causes.
  const perMiB = (result: MicroResult | undefined) =>
    result?.bytes === undefined ? undefined : result.p50 / (result.bytes / 2 ** 20);
  const megabytePerMiB = perMiB(megabyte);
  const tenMegabytesPerMiB = perMiB(tenMegabytes);
  const linear =
    megabytePerMiB === undefined || tenMegabytesPerMiB === undefined ? undefined : tenMegabytesPerMiB / megabytePerMiB;
  return [
    {
      target: "CPU per request (64 connections) ≤ the bare proxy's + the parse-and-validate floor + 0.15 ms",
      measured:
        ownCpu === undefined || cpuBound === undefined
          ? "not measured"
          : `${ownCpu.toFixed(3)} ms against ${bareCpu?.toFixed(3)} + ${floor?.toFixed(3)} + 0.15 = ${cpuBound.toFixed(3)}${inProcess}`,
      met: ownCpu === undefined || cpuBound === undefined ? undefined : ownCpu <= cpuBound,
    },
    {
      target: "throughput at 64 connections ≥ 0.65 × the bare proxy's",
      measured:
        overBare === undefined
          ? "not measured"
          : `${overBare.toFixed(2)} ×${ceiling === undefined ? "" : ` (the floor alone allows ${ceiling.toFixed(2)} ×)`}${floorOverBare === undefined ? "" : `; the floor on Hono (b″) ${floorOverBare.toFixed(2)} ×`}; ${overPortkey === undefined ? "Portkey not measured" : `${overPortkey.toFixed(2)} × Portkey's`}`,
      met: overBare === undefined ? undefined : overBare >= 0.65,
    },
    {
      target: "added p50 at 1 connection ≤ the bare proxy's + 0.15 ms",
      measured:
        ownAdded === undefined || bareAdded === undefined
          ? "not measured"
          : `${ownAdded.toFixed(2)} ms against ${bareAdded.toFixed(2)} + 0.15 = ${(bareAdded + 0.15).toFixed(2)}${floorAdded === undefined ? "" : `; the floor on Hono (b″) adds ${floorAdded.toFixed(2)} ms`}`,
      met: ownAdded === undefined || bareAdded === undefined ? undefined : ownAdded <= bareAdded + 0.15,
    },
    {
      target: "measuring a 1 MB request ≤ 1.5 ms per MB (the body in memory)",
      measured:
        megabyte === undefined
          ? "not measured"
          : `parseCall + measure p50 ${megabyte.p50.toFixed(2)} ms (mean ${megabyte.mean.toFixed(2)})`,
      met: megabyte === undefined ? undefined : megabyte.p50 <= 1.5,
    },
    {
      target: "linear to 10 MB within 1.3 ×",
      measured:
        linear === undefined
          ? "not measured"
          : `p50 ${megabytePerMiB?.toFixed(2)} ms/MiB at 1 MB, ${tenMegabytesPerMiB?.toFixed(2)} ms/MiB at 10 MB (× ${linear.toFixed(2)})`,
      met: linear === undefined ? undefined : linear <= 1.3,
    },
    {
      target: `RSS flat over ${(10 * (results.rss?.every ?? 10_000)).toLocaleString("en")} requests`,
      measured:
        results.rss === undefined
          ? "not measured"
          : `${results.rss.samplesMiB[1]?.toFixed(0)} MiB at ${2 * results.rss.every} → ${results.rss.samplesMiB.at(-1)?.toFixed(0)} MiB at ${10 * results.rss.every} (× ${results.rss.growth.toFixed(3)})`,
      met: results.rss?.flat,
    },
    {
      target: "validating a 10 KB answer, cached validator ≤ 0.1 ms",
      measured:
        cached === undefined ? "not measured" : `p50 ${cached.p50.toFixed(3)} ms (mean ${cached.mean.toFixed(3)})`,
      met: cached === undefined ? undefined : cached.p50 <= 0.1,
    },
  ];
}

/** The verdicts as a Markdown table. */
export function verdictTable(list: readonly Verdict[]): string {
  return [
    "| target | measured | met |",
    "|---|---|---|",
    ...list.map(
      (verdict) =>
        `| ${verdict.target} | ${verdict.measured} | ${verdict.met === undefined ? "–" : verdict.met ? "yes" : "no"} |`,
    ),
  ].join("\n");
}

/** What the gateway's own part of an in-process call allocates, where both figures were measured. */
function ownAllocation(whole: MicroResult, harness: MicroResult): string {
  if (whole.allocatedKiB === undefined || harness.allocatedKiB === undefined) return "";
  return ` and allocates ${(whole.allocatedKiB - harness.allocatedKiB).toFixed(1)} KiB`;
}
