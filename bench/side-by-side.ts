/*
 * Variants of promptgate beside the bare proxy, in one run, in alternating rounds: for trying a change (another
 * checkout, other Node options) in minutes instead of a whole `npm run bench`. Each variant runs the compiled
 * gateway in dist/ of its folder (`npm run build` there first).
 *
 *   npx tsx bench/side-by-side.ts [--connections N] [--seconds S] [--rounds R] [--pause P] [--proxies]
 *     --variant NAME=DIR[,NODE OPTION…][,env:NAME=VALUE…] [--variant …]
 *
 * e.g. `--variant now=. --variant young64=.,--max-semi-space-size=64`; `env:` items set the variant's environment on
 * top of the bench's (`--variant keys=.,env:PROMPTGATE_KEYS=sk-bench`). Every process gets the Node options of `npm
 * start` first (`gatewayNodeOptions`); a variant's own come after them and win (`--memory-reducer` undoes
 * `--no-memory-reducer`). Every round loads each target in turn, in an order that changes from round to round (see
 * `roundOrder`; give a multiple of twice the number of targets as rounds for a balanced run); the first variant is
 * the reference. On a shared virtual machine the speed of
 * the whole machine drifts by tens of per cent within minutes, so the ratios that count are taken within a round
 * (a variant against the reference of the same round) and their median reported, not medians of whole runs.
 * `--pause P` leaves every process idle for P seconds before each round, as traffic with pauses does (and as
 * `npm run bench`, whose rounds load one target at a time, leaves each one idle for about half a minute).
 * `--proxies` also loads the bare proxy on Hono and the same with the parse-and-validate floor's work
 * (`bench/hono-proxy.ts`, `BENCH_FLOOR=1`): what promptgate's stack and the floor cost, in the same rounds.
 * The figures that decide a target still come from `npm run bench`.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { chatRequest, gatewayPath, openaiPath, realisticMessageChars } from "./fixtures.js";
import { type LoadSample, median, runLoad, type Target } from "./load.js";
import {
  type BenchProcess,
  gatewayEnvironment,
  gatewayNodeOptions,
  promptgateListening,
  readyLine,
  startProcess,
  startProxy,
} from "./processes.js";

const { values } = parseArgs({
  options: {
    variant: { type: "string", multiple: true, default: [] },
    connections: { type: "string", default: "64" },
    seconds: { type: "string", default: "6" },
    rounds: { type: "string", default: "4" },
    pause: { type: "string", default: "0" },
    proxies: { type: "boolean", default: false },
  },
});
function usage(problem: string): never {
  process.stderr.write(
    `${problem}\nUsage: npx tsx bench/side-by-side.ts [--connections N] [--seconds S] [--rounds R] [--pause P] [--proxies] --variant NAME=DIR[,NODE OPTION…][,env:NAME=VALUE…] [--variant …]\n`,
  );
  process.exit(2);
}
const variants = (values.variant ?? []).map((spec) => {
  const [head = "", ...items] = spec.split(",");
  const cut = head.indexOf("=");
  if (cut < 1) usage(`--variant ${spec}: give NAME=DIR[,NODE OPTION…][,env:NAME=VALUE…].`);
  const nodeOptions = items.filter((item) => !item.startsWith("env:"));
  const environment = Object.fromEntries(
    items
      .filter((item) => item.startsWith("env:"))
      .map((item) => [item.slice(4, item.indexOf("=")), item.slice(item.indexOf("=") + 1)]),
  );
  return { name: head.slice(0, cut), directory: resolve(head.slice(cut + 1)), nodeOptions, environment };
});
if (variants.length === 0) usage("Give at least one variant.");
const positive = (name: string, text: string | undefined) => {
  const value = Number(text);
  return Number.isInteger(value) && value > 0 ? value : usage(`--${name} ${text}: give a whole number above 0.`);
};
const connections = positive("connections", values.connections);
const seconds = positive("seconds", values.seconds);
const rounds = positive("rounds", values.rounds);
const pause = values.pause === "0" ? 0 : positive("pause", values.pause);

const root = resolve(import.meta.dirname, "..");
const tsx = ["--import", "tsx"];
const body = Buffer.from(JSON.stringify(chatRequest(realisticMessageChars)));
const auth = { authorization: "Bearer sk-bench" };
const processes: BenchProcess[] = [];
const started = async (starting: ReturnType<typeof startProcess>) => {
  const child = await starting;
  processes.push(child.process);
  return child;
};

try {
  const upstream = await started(startProcess([...tsx, "bench/fake-upstream.ts"], {}, readyLine, { cwd: root }));
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  const bare = await started(startProxy("bench/bare-proxy.ts", upstreamUrl, { cwd: root }));
  const targets: Target[] = [
    {
      key: "bare",
      label: "bare proxy",
      url: `http://127.0.0.1:${bare.port}${gatewayPath}`,
      headers: auth,
      pid: bare.process.pid,
    },
  ];
  if (values.proxies) {
    for (const [label, floor] of [
      ["Hono proxy", false],
      ["floor on Hono", true],
    ] as const) {
      const proxy = await started(startProxy("bench/hono-proxy.ts", upstreamUrl, { cwd: root, floor }));
      targets.push({
        key: label,
        label,
        url: `http://127.0.0.1:${proxy.port}${openaiPath}`,
        headers: auth,
        pid: proxy.process.pid,
      });
    }
  }
  for (const variant of variants) {
    const args = [...gatewayNodeOptions, ...variant.nodeOptions, "dist/runtime/node/main.js"];
    const environment = { ...gatewayEnvironment(upstreamUrl), ...variant.environment };
    const gateway = await started(startProcess(args, environment, promptgateListening, { cwd: variant.directory }));
    const url = `http://127.0.0.1:${gateway.port}${gatewayPath}`;
    targets.push({ key: "promptgate", label: variant.name, url, headers: auth, pid: gateway.process.pid });
  }
  // Warm-up: V8 optimizes what a call runs before the rounds count.
  for (const target of targets) await runLoad(target, body, connections, { seconds: 4 }, upstream.process.pid);
  const samples = new Map<string, LoadSample[]>(targets.map((target) => [target.label, []]));
  for (let round = 0; round < rounds; round++) {
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause * 1000));
    for (const target of roundOrder(targets, round)) {
      const sample = await runLoad(target, body, connections, { seconds }, upstream.process.pid);
      if (sample.failed > 0) throw new Error(`${target.label}: ${sample.failed} requests failed.`);
      samples.get(target.label)?.push(sample);
    }
  }
  console.log(report(samples, variants[0]?.name ?? ""));
} finally {
  for (const child of processes) await child.stop();
}

/**
 * The order of the targets in `round`: rotated by one place a round, and reversed in every other cycle of rotations,
 * so that over 2 × (targets) rounds every target runs in every place and after every other target equally often
 * (with the order only reversed every other round, the middle target always ran right after another one, and the
 * last one twice in a row). An A/A run (one build as both variants, 8 and 12 rounds) gave × 0.977 with that order
 * and × 0.997 with this one: no bias large enough to show, but none left to suspect.
 */
function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const cycle = Math.floor(round / targets.length);
  const ordered = cycle % 2 === 0 ? [...targets] : [...targets].reverse();
  const shift = round % targets.length;
  return [...ordered.slice(shift), ...ordered.slice(0, shift)];
}

/** A Markdown table: per target the medians of its rounds, and per variant its ratios to the reference by round. */
function report(samples: Map<string, LoadSample[]>, reference: string): string {
  const of = (label: string) => samples.get(label) ?? [];
  const cpu = (sample: LoadSample) => sample.cpuMsPerRequest ?? Number.NaN;
  const byRound = (label: string, value: (sample: LoadSample) => number) =>
    median(of(label).map((sample, round) => value(sample) / value(of(reference)[round] as LoadSample)));
  const rows = [...samples.keys()].map((label) => {
    const runs = of(label);
    const own =
      label === "bare proxy"
        ? ""
        : `${byRound(label, cpu).toFixed(3)} | ${byRound(label, (s) => s.requestsPerSecond).toFixed(3)}`;
    const rss = Math.max(...runs.map((sample) => sample.rssMiB ?? Number.NaN));
    const toBare = median(
      runs.map((sample, round) => sample.requestsPerSecond / (of("bare proxy")[round] as LoadSample).requestsPerSecond),
    );
    return `| ${label} | ${median(runs.map(cpu)).toFixed(3)} | ${median(runs.map((s) => s.requestsPerSecond)).toFixed(0)} | ${toBare.toFixed(3)} | ${median(runs.map((s) => s.p50)).toFixed(2)} | ${median(runs.map((s) => s.p99)).toFixed(2)} | ${rss.toFixed(0)} | ${own || " | "} |`;
  });
  // The spread behind each median: on a shared machine a single round can be off by tens of per cent.
  const spread = [...samples.keys()]
    .filter((label) => label !== "bare proxy" && label !== reference)
    .map((label) => {
      const ratios = of(label).map((sample, round) => cpu(sample) / cpu(of(reference)[round] as LoadSample));
      return `${label}: CPU × ${reference} by round ${ratios.map((ratio) => ratio.toFixed(3)).join(", ")}`;
    });
  return [
    `${connections} connections, ${rounds} rounds of ${seconds} s${pause > 0 ? `, each after ${pause} s idle` : ""}; ratios by round against ${reference}`,
    "",
    "| target | CPU ms/req | req/s | × bare (by round) | p50 ms | p99 ms | peak RSS MiB | CPU × ref | req/s × ref |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    ...spread,
  ].join("\n");
}
