import { loadAnswerFloor, loadRequestFloor, type MicroResult } from "./micro.js";
import { type RunResults, ratio } from "./report.js";

/** One target of issue 7 with the figure this run measured. */
export interface Verdict {
  target: string;
  measured: string;
  met: boolean | undefined;
}

const micro = (results: RunResults, name: string) => results.micro.find((result) => result.name === name);

/** Each target of issue 7, judged on this run's figures (undefined where the run could not measure it). */
export function verdicts(results: RunResults): Verdict[] {
  const overBare = ratio(results.load, "bare", 64);
  const overPortkey = ratio(results.load, "portkey", 64);
  // The ratio no gateway that parses the request and validates the answer can pass on this machine: the bare
  // proxy's CPU per request over that plus the floor of the work (both from this run).
  const bareCpu = results.load.find((figure) => figure.target === "bare" && figure.connections === 64)?.cpuMsPerRequest;
  const floorRequest = micro(results, loadRequestFloor)?.p50;
  const floorAnswer = micro(results, loadAnswerFloor)?.p50;
  const ceiling =
    bareCpu === undefined || floorRequest === undefined || floorAnswer === undefined
      ? undefined
      : bareCpu / (bareCpu + floorRequest + floorAnswer);
  const ceilingNote =
    ceiling === undefined
      ? ""
      : ` (ceiling for any gateway that parses the request and validates the answer: ${ceiling.toFixed(2)} ×, from the bare proxy's ${bareCpu?.toFixed(3)} CPU ms/req and a floor of ${((floorRequest ?? 0) + (floorAnswer ?? 0)).toFixed(3)} ms)`;
  const megabyte = micro(results, "parseCall + measure, 1 MB request");
  const tenMegabytes = micro(results, "parseCall + measure, 10 MB request");
  const countingOnly = micro(results, "measure alone (parsed call), 1 MB request");
  const cached = micro(results, "validate 10 KB answer, cached validator");
  // Judged on medians: the machine is shared, and a mean takes in every pause another process causes.
  const perMiB = (result: MicroResult | undefined) =>
    result?.bytes === undefined ? undefined : result.p50 / (result.bytes / 2 ** 20);
  const megabytePerMiB = perMiB(megabyte);
  const tenMegabytesPerMiB = perMiB(tenMegabytes);
  // Linear: the cost per MiB of a 10 MB request within 1.5 times that of a 1 MB one.
  const linear =
    megabytePerMiB === undefined || tenMegabytesPerMiB === undefined ? undefined : tenMegabytesPerMiB / megabytePerMiB;
  const countingTen = perMiB(micro(results, "measure alone (parsed call), 10 MB request"));
  const countingOne = perMiB(countingOnly);
  const countingLinear = countingOne === undefined || countingTen === undefined ? undefined : countingTen / countingOne;
  return [
    {
      target: "throughput at 64 connections ≥ 0.8 × the bare proxy's",
      measured: overBare === undefined ? "not measured" : `${overBare.toFixed(2)} ×${ceilingNote}`,
      met: overBare === undefined ? undefined : overBare >= 0.8,
    },
    {
      target: "throughput ≥ 8 × Portkey's (64 connections)",
      measured: overPortkey === undefined ? "Portkey not measured" : `${overPortkey.toFixed(2)} ×`,
      met: overPortkey === undefined ? undefined : overPortkey >= 8,
    },
    {
      target: "measurement linear in size",
      measured:
        linear === undefined
          ? "not measured"
          : `parseCall + measure p50 ${megabytePerMiB?.toFixed(2)} ms/MiB at 1 MB, ${tenMegabytesPerMiB?.toFixed(2)} ms/MiB at 10 MB (× ${linear.toFixed(2)}); measure alone × ${countingLinear?.toFixed(2)}`,
      met: linear === undefined ? undefined : linear <= 1.5,
    },
    {
      target: "measurement < 1 ms for a 1 MB request",
      measured:
        megabyte === undefined
          ? "not measured"
          : `parseCall + measure p50 ${megabyte.p50.toFixed(2)} ms (mean ${megabyte.mean.toFixed(2)}); measure alone p50 ${countingOnly?.p50.toFixed(2)} ms`,
      met: megabyte === undefined ? undefined : megabyte.p50 < 1,
    },
    {
      target: "validating a 10 KB answer, cached validator < 0.2 ms",
      measured:
        cached === undefined ? "not measured" : `p50 ${cached.p50.toFixed(3)} ms (mean ${cached.mean.toFixed(3)})`,
      met: cached === undefined ? undefined : cached.p50 < 0.2,
    },
    {
      target: `RSS flat over ${(10 * (results.rss?.every ?? 10_000)).toLocaleString("en")} requests`,
      measured:
        results.rss === undefined
          ? "not measured"
          : `${results.rss.samplesMiB[1]?.toFixed(0)} MiB at ${2 * results.rss.every} → ${results.rss.samplesMiB.at(-1)?.toFixed(0)} MiB at ${10 * results.rss.every} (× ${results.rss.growth.toFixed(3)})`,
      met: results.rss?.flat,
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
