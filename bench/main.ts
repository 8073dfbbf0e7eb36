// npm run bench: promptgate beside a direct call, a bare Node proxy and Portkey's gateway, all against one fast
// fake upstream on loopback, in alternating rounds; then RSS over 100,000 requests, a CPU profile of promptgate
// under load and the microbenchmarks. Writes bench/results/<date>.json and prints Markdown tables.
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { summarizeProfile } from "./cpu-profile.js";
import { chatRequest, gatewayPath, openaiPath, realisticMessageChars } from "./fixtures.js";
import { type EventLoopFigures, measureEventLoop } from "./large-schemas.js";
import { type LoadSample, runLoad, type Target } from "./load.js";
import { runMicro } from "./micro.js";
import { installPortkey, portkeyVersion, startPortkey } from "./portkey.js";
import {
  type BenchProcess,
  gatewayEnvironment,
  gatewayNodeOptions,
  memoryMiB,
  promptgateListening,
  readyLine,
  startProcess,
  startProxy,
} from "./processes.js";
import { aggregate, cpuRatio, machine, markdown, type RssSeries, type RunResults, ratio } from "./report.js";
import { verdicts, verdictTable } from "./verdicts.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const tmp = join(root, "bench", ".tmp");
const quick = process.argv.includes("--quick");
/** `--against DIR`: also load the promptgate of another checkout (e.g. the commit before a change), side by side. */
const againstIndex = process.argv.indexOf("--against");
const against = againstIndex === -1 ? undefined : process.argv[againstIndex + 1];
const settings = {
  rounds: quick ? 1 : 3,
  seconds: quick ? 2 : 5,
  // Long enough for V8 to have optimized what a call runs: after 3 s at 16 connections promptgate still spent
  // 0.87 ms per request on V8's compiler threads in the next 5 s at 1 connection, and 0.08 ms after 30 s.
  warmupSeconds: quick ? 1 : 20,
  connections: [1, 16, 64],
  rssEvery: quick ? 1_000 : 10_000,
  profileSeconds: quick ? 3 : 8,
  eventLoopSeconds: quick ? 4 : 10,
  realisticMessageChars,
  // Given to promptgate and to the proxies alike: the options of `npm start`.
  nodeOptions: gatewayNodeOptions,
};
const tsx = ["--import", "tsx"];
const run = promisify(execFile);
const children: BenchProcess[] = [];
const log = (line: string) => process.stderr.write(`${line}\n`);
const auth = { authorization: "Bearer sk-bench" };

/** promptgate on `port`, called on the investigation.bounded policy's OpenAI route. */
function gatewayTarget(label: string, port: number, pid: number): Target {
  return { key: "promptgate", label, url: `http://127.0.0.1:${port}${gatewayPath}`, headers: auth, pid };
}

/**
 * Starts promptgate as `npm start` does, the compiled JavaScript in dist/ (built by `npm run bench`; a checkout
 * given with --against must be built too), with node options first and the bench's probes preloaded through tsx.
 */
function startGateway(
  upstream: string,
  extra: {
    nodeOptions?: string[];
    preload?: string;
    heapFile?: string;
    loopFile?: string;
    db?: string;
    cwd?: string;
    workers?: number;
    env?: Record<string, string>;
  } = {},
) {
  const environment = {
    ...gatewayEnvironment(upstream),
    PROMPTGATE_DB: extra.db ?? "memory",
    PROMPTGATE_UPSTREAM_GEMINI: "simulated",
    PROMPTGATE_UPSTREAM_ANTHROPIC: "simulated",
    BENCH_HEAP_FILE: extra.heapFile ?? "",
    BENCH_LOOP_FILE: extra.loopFile ?? "",
    PROMPTGATE_WORKERS: String(extra.workers ?? 1),
    ...extra.env,
  };
  const preload = extra.preload === undefined ? [] : ["--import", extra.preload];
  const args = [...gatewayNodeOptions, ...(extra.nodeOptions ?? []), ...tsx, ...preload, "dist/runtime/node/main.js"];
  return tracked(startProcess(args, environment, promptgateListening, { cwd: extra.cwd ?? root }));
}

async function tracked<T extends { process: BenchProcess }>(starting: Promise<T>): Promise<T> {
  const started = await starting;
  children.push(started.process);
  return started;
}

/** One request to a target: it must answer 200 (and promptgate must have validated the answer). */
async function check(target: Target, body: Buffer): Promise<Record<string, string>> {
  const response = await fetch(target.url, {
    method: "POST",
    headers: { "content-type": "application/json", ...target.headers },
    body: body.toString("utf8"),
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes("chatcmpl-bench")) {
    throw new Error(`${target.label} answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return Object.fromEntries(response.headers);
}

async function measureRss(upstream: string, body: Buffer, upstreamPid: number): Promise<RssSeries> {
  const heapFile = join(tmp, `heap-${Date.now()}.jsonl`);
  await mkdir(tmp, { recursive: true });
  const { process: gateway, port } = await startGateway(upstream, {
    nodeOptions: ["--expose-gc"],
    preload: "./bench/heap-probe.ts",
    heapFile,
  });
  const target = gatewayTarget("promptgate", port, gateway.pid);
  const samplesMiB: number[] = [];
  const liveHeapMiB: number[] = [];
  let ok = 0;
  let failed = 0;
  let seconds = 0;
  for (let batch = 0; batch < 10; batch++) {
    const sample = await runLoad(target, body, 64, { requests: settings.rssEvery }, upstreamPid);
    ok += sample.ok;
    failed += sample.failed;
    seconds += sample.seconds;
    samplesMiB.push(memoryMiB(gateway.pid)?.rss ?? Number.NaN);
    liveHeapMiB.push(await liveHeap(gateway.pid, heapFile, batch + 1));
    log(
      `  after ${(batch + 1) * settings.rssEvery} requests: RSS ${samplesMiB.at(-1)?.toFixed(1)} MiB, live heap ${liveHeapMiB.at(-1)?.toFixed(1)} MiB`,
    );
  }
  await gateway.stop();
  await rm(heapFile, { force: true });
  const growth = (samplesMiB.at(-1) ?? Number.NaN) / (samplesMiB[1] ?? Number.NaN);
  return {
    every: settings.rssEvery,
    samplesMiB,
    liveHeapMiB,
    requestsPerSecond: ok / seconds,
    failed,
    growth,
    flat: Math.abs(growth - 1) <= 0.15,
  };
}

/** Asks the heap probe for a full GC and the live heap after it (MiB); waits for its `line`-th report. */
async function liveHeap(pid: number, file: string, line: number): Promise<number> {
  process.kill(pid, "SIGUSR2");
  for (let attempt = 0; attempt < 100; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = (await readFile(file, "utf8").catch(() => "")).trim().split("\n");
    if (lines.length >= line && lines[line - 1] !== "") {
      return (JSON.parse(lines[line - 1]!) as { heapUsed: number }).heapUsed / 2 ** 20;
    }
  }
  return Number.NaN;
}

/** The event loop's delay in a fresh promptgate while 10 large new schemas arrive beside the load test's call. */
async function measureLoop(upstream: string, body: Buffer, upstreamPid: number): Promise<EventLoopFigures> {
  const loopFile = join(tmp, `loop-${Date.now()}.jsonl`);
  await mkdir(tmp, { recursive: true });
  const { process: gateway, port } = await startGateway(upstream, { preload: "./bench/event-loop-probe.ts", loopFile });
  try {
    return await measureEventLoop(gatewayTarget("promptgate", port, gateway.pid), `http://127.0.0.1:${port}`, body, {
      loopFile,
      upstreamPid,
      seconds: settings.eventLoopSeconds,
      connections: 16,
      salt: new Date().toISOString(),
    });
  } finally {
    await gateway.stop();
    await rm(loopFile, { force: true });
  }
}

async function profileGateway(upstream: string, body: Buffer, upstreamPid: number) {
  const directory = join(tmp, `profile-${Date.now()}`);
  await mkdir(directory, { recursive: true });
  const spawned = Date.now();
  const { process: gateway, port } = await startGateway(upstream, {
    nodeOptions: ["--cpu-prof", "--cpu-prof-dir", directory],
  });
  const target = gatewayTarget("promptgate", port, gateway.pid);
  await runLoad(target, body, 64, { seconds: settings.warmupSeconds }, upstreamPid);
  const skipMs = Date.now() - spawned;
  const sample = await runLoad(target, body, 64, { seconds: settings.profileSeconds }, upstreamPid);
  log(`  profiled: ${sample.requestsPerSecond.toFixed(0)} req/s under the profiler`);
  // SIGTERM runs the gateway's own shutdown, whose process.exit() writes the profile.
  await gateway.stop(15_000);
  const summary = await summarizeProfile(directory, skipMs);
  await rm(directory, { recursive: true, force: true });
  return summary;
}

/**
 * Loads already started gateways side by side at 64 connections: each warmed up (a second worker still starting
 * when the first one's line arrived is waited out too), then alternating rounds. The samples of each, by name;
 * the gateways are stopped afterwards.
 */
async function sideBySide<Name extends string>(
  started: ReadonlyArray<readonly [Name, Awaited<ReturnType<typeof startGateway>>]>,
  body: Buffer,
  upstreamPid: number,
): Promise<Map<Name, LoadSample[]>> {
  const connections = 64;
  const targets = started.map(
    ([name, gateway]) => [name, gatewayTarget(name, gateway.port, gateway.process.pid)] as const,
  );
  for (const [, target] of targets) {
    await check(target, body);
    await runLoad(target, body, connections, { seconds: settings.warmupSeconds }, upstreamPid);
  }
  const samples = new Map<Name, LoadSample[]>(targets.map(([name]) => [name, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const [name, target] of targets) {
      const sample = await runLoad(target, body, connections, { seconds: settings.seconds }, upstreamPid);
      samples.get(name)?.push(sample);
      log(
        `round ${round} ${name} c=${connections} ${sample.requestsPerSecond.toFixed(0)} req/s CPU ${sample.cpuMsPerRequest?.toFixed(3)} ms/req failed ${sample.failed}`,
      );
    }
  }
  for (const [, gateway] of started) await gateway.process.stop();
  return samples;
}

/** The mean of one figure over samples. */
function meanOf(samples: LoadSample[] | undefined, figure: (sample: LoadSample) => number | undefined): number {
  const values = (samples ?? []).map(figure).filter((value): value is number => value !== undefined);
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * Throughput at 64 connections of promptgate on a SQLite file with one worker process and with two
 * (`PROMPTGATE_WORKERS=2`). Only requests per second: the CPU figures of the load test follow one process, and two
 * workers are two.
 */
async function measureWorkers(upstream: string, body: Buffer, upstreamPid: number): Promise<RunResults["workers"]> {
  const files = [1, 2].map((workers) => join(tmp, `bench-workers-${workers}-${Date.now()}.db`));
  const started = [
    ["one", await startGateway(upstream, { db: files[0], workers: 1 })],
    ["two", await startGateway(upstream, { db: files[1], workers: 2 })],
  ] as const;
  const samples = await sideBySide(started, body, upstreamPid);
  for (const file of files) for (const suffix of ["", "-wal", "-shm"]) await rm(`${file}${suffix}`, { force: true });
  const one = meanOf(samples.get("one"), (sample) => sample.requestsPerSecond);
  const two = meanOf(samples.get("two"), (sample) => sample.requestsPerSecond);
  return { connections: 64, oneWorker: one, twoWorkers: two, ratio: two / one };
}

/**
 * CPU per request at 64 connections of promptgate (memory store) without metrics (`PROMPTGATE_METRICS=false`), with
 * them (the default), and with them and OpenTelemetry tracing (spans exported to the fake upstream, which answers
 * every request); their ratios are the cost of each.
 */
async function measureObservability(
  upstream: string,
  body: Buffer,
  upstreamPid: number,
): Promise<RunResults["observability"]> {
  const tracing = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${upstream}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: "1000" };
  const started = [
    ["metricsOff", await startGateway(upstream, { env: { PROMPTGATE_METRICS: "false" } })],
    ["metricsOn", await startGateway(upstream)],
    ["metricsAndTracing", await startGateway(upstream, { env: tracing })],
  ] as const;
  const samples = await sideBySide(started, body, upstreamPid);
  const cpu = (name: (typeof started)[number][0]) => meanOf(samples.get(name), (sample) => sample.cpuMsPerRequest);
  const off = cpu("metricsOff");
  const on = cpu("metricsOn");
  const traced = cpu("metricsAndTracing");
  return {
    connections: 64,
    cpuMsPerRequest: { metricsOff: off, metricsOn: on, metricsAndTracing: traced },
    metricsCost: on / off,
    tracingCost: traced / on,
  };
}

async function main(): Promise<void> {
  const date = new Date().toISOString();
  const machineBefore = machine();
  // What is measured is the working tree as the run starts: its commit, and whether src/ differs from it.
  const commit = await run("git", ["rev-parse", "HEAD"], { cwd: root }).then(
    (output) => output.stdout.trim(),
    () => "unknown",
  );
  const dirty = await run("git", ["status", "--porcelain", "--", "src"], { cwd: root }).then(
    (output) => output.stdout.trim() !== "",
    () => false,
  );
  const body = Buffer.from(JSON.stringify(chatRequest(realisticMessageChars)));
  log(
    `promptgate bench: ${machineBefore.cpus} × ${machineBefore.cpuModel}, Node ${machineBefore.node}, body ${body.byteLength} bytes`,
  );

  const upstream = await tracked(startProcess([...tsx, "bench/fake-upstream.ts"], {}, readyLine, { cwd: root }));
  const upstreamBase = `http://127.0.0.1:${upstream.port}`;
  const bare = await tracked(startProxy("bench/bare-proxy.ts", upstreamBase, { cwd: root }));
  const honoProxy = await tracked(startProxy("bench/hono-proxy.ts", upstreamBase, { cwd: root }));
  const floorProxy = await tracked(startProxy("bench/hono-proxy.ts", upstreamBase, { cwd: root, floor: true }));
  const gateway = await startGateway(upstreamBase);
  // The same gateway on a SQLite file, the Node default (`PROMPTGATE_DB` unset): every call appends its record.
  await mkdir(tmp, { recursive: true });
  const sqliteFile = join(tmp, `bench-${Date.now()}.db`);
  const gatewayOnSqlite = await startGateway(upstreamBase, { db: sqliteFile });
  const againstGateway = against === undefined ? undefined : await startGateway(upstreamBase, { cwd: against });
  const againstCommit =
    against === undefined
      ? undefined
      : await run("git", ["rev-parse", "HEAD"], { cwd: against }).then(
          (output) => output.stdout.trim(),
          () => "unknown",
        );
  const targets: Target[] = [
    {
      key: "direct",
      label: "(a) direct to upstream",
      url: `${upstreamBase}${openaiPath}`,
      headers: auth,
      pid: upstream.process.pid,
    },
    {
      key: "bare",
      label: "(b) bare Node proxy",
      url: `http://127.0.0.1:${bare.port}${openaiPath}`,
      headers: auth,
      pid: bare.process.pid,
    },
    {
      key: "hono",
      label: "(b′) bare proxy on Hono",
      url: `http://127.0.0.1:${honoProxy.port}${openaiPath}`,
      headers: auth,
      pid: honoProxy.process.pid,
    },
    {
      key: "floor",
      label: "(b″) the floor on Hono: (b′) that also parses the request and validates the answer",
      url: `http://127.0.0.1:${floorProxy.port}${openaiPath}`,
      headers: auth,
      pid: floorProxy.process.pid,
    },
    gatewayTarget("(c) promptgate", gateway.port, gateway.process.pid),
    {
      ...gatewayTarget("(c′) promptgate, SQLite store", gatewayOnSqlite.port, gatewayOnSqlite.process.pid),
      key: "promptgate-sqlite",
    },
  ];
  if (againstGateway !== undefined) {
    targets.push({
      ...gatewayTarget(
        `(c⁰) promptgate at ${againstCommit?.slice(0, 12)} (--against)`,
        againstGateway.port,
        againstGateway.process.pid,
      ),
      key: "promptgate-against",
    });
  }
  const skipped: RunResults["skipped"] = [];
  try {
    const portkey = await tracked(startPortkey(await installPortkey(tmp)));
    const target: Target = {
      key: "portkey",
      label: `(d) Portkey ${portkeyVersion}`,
      url: `http://127.0.0.1:${portkey.port}${openaiPath}`,
      headers: { ...auth, "x-portkey-provider": "openai", "x-portkey-custom-host": `${upstreamBase}/v1` },
      pid: portkey.process.pid,
    };
    // A peer that cannot install, start or forward here is reported as skipped; the other three still run.
    await check(target, body).catch(async (error: unknown) => {
      await portkey.process.stop();
      throw error;
    });
    targets.push(target);
  } catch (error) {
    skipped.push({ target: "(d) Portkey", reason: error instanceof Error ? error.message : String(error) });
  }

  const gatewayHeaders = await check(targets.find((target) => target.key === "promptgate")!, body);
  if (gatewayHeaders["x-promptgate-validation"] !== "valid") throw new Error("promptgate did not validate the answer.");
  for (const target of targets) await check(target, body);
  log(`promptgate prompt_size: ${gatewayHeaders["x-promptgate-prompt-size"]}`);

  for (const target of targets)
    await runLoad(target, body, 16, { seconds: settings.warmupSeconds }, upstream.process.pid);
  const samples: Array<LoadSample & { target: string }> = [];
  for (let round = 1; round <= settings.rounds; round++) {
    for (const connections of settings.connections) {
      for (const target of targets) {
        const sample = await runLoad(target, body, connections, { seconds: settings.seconds }, upstream.process.pid);
        samples.push({ ...sample, target: target.key });
        log(
          `round ${round} ${target.key.padEnd(10)} c=${String(connections).padStart(2)} ${sample.requestsPerSecond.toFixed(0).padStart(6)} req/s p50 ${sample.p50.toFixed(2)} ms p99 ${sample.p99.toFixed(2)} ms failed ${sample.failed} other load ${sample.foreignCores?.toFixed(2)} cores`,
        );
      }
    }
  }
  const peaks = new Map(targets.map((target) => [target.key, memoryMiB(target.pid)?.peak]));
  // Every child but the upstream (the first), which the RSS check and the profile still need.
  for (const child of children.slice(1)) await child.stop();
  for (const suffix of ["", "-wal", "-shm"]) await rm(`${sqliteFile}${suffix}`, { force: true });

  log("one worker process against two (PROMPTGATE_WORKERS=2, SQLite)…");
  const workers = await measureWorkers(upstreamBase, body, upstream.process.pid);
  log("the cost of metrics and tracing…");
  const observability = await measureObservability(upstreamBase, body, upstream.process.pid);
  log("RSS over time (fresh promptgate)…");
  const rss = await measureRss(upstreamBase, body, upstream.process.pid);
  log("event loop while 10 large new schemas arrive…");
  const eventLoop = await measureLoop(upstreamBase, body, upstream.process.pid);
  log(
    `  event loop delay p99 ${eventLoop.withLargeSchemas.loop.p99.toFixed(1)} ms, max ${eventLoop.withLargeSchemas.loop.max.toFixed(1)} ms (alone: p99 ${eventLoop.baseline.loop.p99.toFixed(1)} ms)`,
  );
  log("CPU profile of promptgate under load…");
  const profile = await profileGateway(upstreamBase, body, upstream.process.pid);
  await upstream.process.stop();
  log("microbenchmarks…");
  const micro = await runMicro((result) => log(`  ${result.name}: ${result.mean.toFixed(4)} ms`));

  const load = aggregate(samples);
  const results: RunResults = {
    date,
    command: `npm run bench${quick ? " -- --quick" : ""}`,
    machine: machineBefore,
    source: { commit, srcModified: dirty, ...(againstCommit === undefined ? {} : { against: againstCommit }) },
    loadAverageAfter: loadavg()[0] ?? 0,
    settings: {
      ...settings,
      requestBodyBytes: body.byteLength,
      promptSize: JSON.parse(gatewayHeaders["x-promptgate-prompt-size"] ?? "null"),
    },
    targets: targets.map((target) => ({ key: target.key, label: target.label, peakRssMiB: peaks.get(target.key) })),
    skipped,
    load,
    ratios: settings.connections.map((connections) => ({
      connections,
      promptgateOverBare: ratio(load, "bare", connections),
      promptgateOverPortkey: ratio(load, "portkey", connections),
      sqliteOverBare: ratio(load, "bare", connections, "promptgate-sqlite"),
      cpuOverAgainst: cpuRatio(load, "promptgate-against", connections),
    })),
    rss,
    eventLoop,
    workers,
    observability,
    profile,
    micro,
  };
  const list = verdicts(results);
  const resultsDirectory = join(root, "bench", "results");
  await mkdir(resultsDirectory, { recursive: true });
  const file = join(resultsDirectory, `${date.replace(/:/g, "-").replace(/\.\d+Z$/, "Z")}.json`);
  // Four decimals are more than any figure here can claim.
  const rounded = (_key: string, value: unknown) =>
    typeof value === "number" && !Number.isInteger(value) ? Math.round(value * 1e4) / 1e4 : value;
  await writeFile(file, `${JSON.stringify({ ...results, verdicts: list }, rounded, 2)}\n`);
  // In the repository's own format, so that `npm run lint` passes with the file committed.
  await run("npx", ["biome", "format", "--write", file], { cwd: root }).catch(() => undefined);
  process.stdout.write(`${markdown(results)}\n\n${verdictTable(list)}\n\nResults: ${file}\n`);
}

try {
  await main();
} finally {
  for (const child of children) await child.stop();
}
