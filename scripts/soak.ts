/**
 * Soak test (outside `npm test`): `npm run soak -- --minutes 10 [--concurrency 8] [--streams 4]
 * [--kill-every 30] [--half-open 300] [--schema-lanes 1] [--pathological-lanes 1]`.
 *
 * Runs the gateway as a child process (`node --import tsx src/runtime/node/main.ts`, gateway-key
 * mode, a SQLite file) against a fake upstream for the given minutes, under:
 * - mixed load: accepted calls on the three surfaces (plain and streamed), oversize, invalid and
 *   window-breaking bodies, upstream faults (error bodies, resets, malformed JSON, cut streams, a
 *   hang past a one-second deadline), recursive response schemas, upstream redirects, and
 *   7,000-character case/call headers with and without a valid key;
 * - a lane of large distinct response schemas (50,000–110,000 characters, two in eight over the cap);
 * - a lane of pathological inputs, one after another: a structured-output call whose answer fails a
 *   `$ref` chain of unions 8 deep (annotated, and refused under a strict policy), a window signature of 4^11
 *   alternatives, fragments, evidence and recall with one-character pages of a megabyte, and a context block of
 *   0.94 MB of similar chunks with `top_k` and `max_per_document` as large, and one at the route's caps;
 * - lanes of slow streams (one in five keeps its connection 250 ms after its final event), and a
 *   SIGKILL of the gateway every `--kill-every` seconds from 45 s (a quarter of a short run) to 40 %
 *   of the run, each followed by a restart on the same database: in turn while streams are mid-way,
 *   the moment a client has read a final event, and the moment it has read a late-ending stream's
 *   final event. Kills stop early so that the last process runs long enough to measure its RSS drift;
 * - every minute, `--half-open` sockets that send the start of a request and stall, while /healthz
 *   is probed (never during a kill).
 * Meanwhile, /healthz is probed every 100 ms from a thread of its own, and each gateway process reports
 * its serving thread's event-loop delay (monitorEventLoopDelay, through a preloaded module).
 * At the end: a burst of unauthenticated header floods that must not add a row, a graceful stop
 * (SIGTERM), and every answer a client received looked up in the database by its `x-promptgate-ref`.
 * A status line every 10 s; a verdict per criterion at the end; exit code 1 if any fails.
 */

import { monitorEventLoopDelay } from "node:perf_hooks";
import { copyPolicies, tempDatabase } from "../test/support/temp-state.js";
import { createDisruptions } from "./soak/disruptions.js";
import { startFakeProvider } from "./soak/fake-provider.js";
import { fire } from "./soak/fire.js";
import { floodBurst } from "./soak/flood-burst.js";
import { startGatewayChild } from "./soak/gateway-child.js";
import { watchHealthz } from "./soak/healthz-watch.js";
import { watchGatewayLoop } from "./soak/loop-delay.js";
import { watchMachine } from "./soak/machine-load.js";
import { readOptions } from "./soak/options.js";
import { pathologicalShot, strictPolicy } from "./soak/pathological-shots.js";
import { blockCriteria, printBlockFigures } from "./soak/pathological-summary.js";
import { readStoredCalls } from "./soak/records.js";
import { checkRecords } from "./soak/records-check.js";
import { fixed, printClasses, printVerdicts, seconds } from "./soak/report.js";
import { gatewayKey, largeSchemaShot, maxBodyBytes, mixedShot, type Shot, slowStreamShot } from "./soak/shots.js";
import { checks, criteria, inFlightAtKills, printFigures, type SoakRun } from "./soak/summary.js";
import { count, createTally } from "./soak/tally.js";

const options = readOptions();
const durationMs = options.minutes * 60_000;
const started = Date.now();
const clock = () => Date.now() - started;

const soakPolicy = `name = "soak.short"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream]
deadline_seconds = 1
`;

const provider = await startFakeProvider();
const { origin } = provider.upstream;
const database = tempDatabase();
const gatewayLoop = watchGatewayLoop();
const healthz = watchHealthz(100);
const gateway = await startGatewayChild(
  {
    PROMPTGATE_DB: database,
    PROMPTGATE_POLICIES: copyPolicies({ "soak.short.toml": soakPolicy, [strictPolicy.file]: strictPolicy.toml }),
    PROMPTGATE_MAX_BODY_BYTES: String(maxBodyBytes),
    PROMPTGATE_KEYS: gatewayKey,
    PROMPTGATE_UPSTREAM_OPENAI: `${origin}/openai/v1`,
    PROMPTGATE_UPSTREAM_GEMINI: `${origin}/gemini`,
    PROMPTGATE_UPSTREAM_ANTHROPIC: `${origin}/anthropic`,
    OPENAI_API_KEY: "sk-soak-openai",
    GEMINI_API_KEY: "soak-gemini",
    ANTHROPIC_API_KEY: "sk-ant-soak",
    ...gatewayLoop.environment,
  },
  clock,
  {
    nodeArguments: gatewayLoop.nodeArguments,
    listening(pid, url) {
      gatewayLoop.listening(pid);
      healthz.follow(url);
    },
  },
);
const loadStart = clock();
const machine = watchMachine();
const deadline = Date.now() + durationMs;
const tally = createTally();
const disruptionsStartedAt = Date.now();
const disruptions = createDisruptions(
  gateway,
  {
    durationMs,
    killEveryMs: options.killEvery * 1000,
    streams: options.streams,
    halfOpenSockets: options.halfOpen,
  },
  disruptionsStartedAt,
);

/** Sends shots one after another until the deadline, each to whichever gateway process is running. */
async function lane(next: () => Shot, pauseMs = 0): Promise<void> {
  while (Date.now() < deadline) {
    const target = await gateway.ready();
    const lifetime = gateway.current();
    const shot = next();
    const streamEnded = shot.kind.startsWith("slow-stream") ? disruptions.streamStarted() : undefined;
    const outcome = await fire(target, shot, shot.stream ? 20_000 : 10_000, disruptions.finalEventRead);
    streamEnded?.();
    count(tally, outcome, lifetime.signalled === "SIGKILL" || lifetime.end === "crashed");
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/** The status line every 10 s, with the answers by class every 30 s and at the end. */
function status(final = false): void {
  const at = clock() - loadStart;
  const lifetime = gateway.current();
  const rss = lifetime.rss.at(-1)?.mib;
  const { logLines, internalErrors } = gateway.counts();
  const crashes = gateway.lifetimes.filter((candidate) => candidate.end === "crashed").length;
  console.log(
    `[${(at / 1000).toFixed(0).padStart(4)} s] gateway #${lifetime.index} up ${seconds(clock() - lifetime.startedAt)}, rss ${fixed(rss ?? Number.NaN)} MiB; ` +
      `requests ${tally.requests} (${(tally.requests / Math.max(1, at / 1000)).toFixed(0)}/s); valid 5xx ${tally.valid.status5xx}, ` +
      `unanswered ${tally.valid.unanswered}; kills ${disruptions.kills.length}, cut by kill ${tally.cutByKill}, crashes ${crashes}; ` +
      `half-open phases ${disruptions.halfOpenPhases.length}; log lines ${logLines}, internal errors ${internalErrors}`,
  );
  if (final || Math.round(at / 10_000) % 3 === 0) printClasses(tally.byClass);
}

gateway.sampleRss();
status();
const sampler = setInterval(() => gateway.sampleRss(), 2_000);
const timer = setInterval(() => status(), 10_000);
const salt = `soak ${started}`;
let mixed = 0;
let slow = 0;
let large = 0;
const soakLoop = monitorEventLoopDelay({ resolution: 5 });
soakLoop.enable();
await Promise.all([
  ...Array.from({ length: options.concurrency }, () => lane(() => mixedShot(mixed++))),
  ...Array.from({ length: options.streams }, () => lane(() => slowStreamShot(slow++))),
  ...Array.from({ length: options.schemaLanes }, () => lane(() => largeSchemaShot(large++, salt), 1_000)),
  // Each pathological lane counts its own shots, so that its recalls follow the evidence they read.
  ...Array.from({ length: options.pathologicalLanes }, () => {
    let pathological = 0;
    return lane(() => pathologicalShot(pathological++), 100);
  }),
  disruptions.run(),
]);
clearInterval(timer);
soakLoop.disable();
status(true);
const blocks = {
  gatewayLoop: gatewayLoop.read(gateway.lifetimes.map((lifetime) => lifetime.pid)),
  healthz: await healthz.stop(
    disruptions.kills.map((kill) => ({
      from: disruptionsStartedAt + kill.at - kill.restartMs,
      to: disruptionsStartedAt + kill.at,
    })),
  ),
  // As in the gateway's report: what exceeds the 5 ms timer's period.
  soakLoop: { p99: Math.max(0, soakLoop.percentile(99) / 1e6 - 5), max: Math.max(0, soakLoop.max / 1e6 - 5) },
};

const flood = await floodBurst(gateway, database);
gateway.sampleRss();
clearInterval(sampler);
const machineLine = machine.line(gateway.lifetimes.reduce((sum, lifetime) => sum + lifetime.cpuSeconds, 0));
const stopExit = await gateway.stop();
const stored = readStoredCalls(database);

const run: SoakRun = {
  tally,
  records: checkRecords(tally, stored),
  overlongLabels: stored.overlongLabels,
  gateway,
  kills: disruptions.kills,
  halfOpenPhases: disruptions.halfOpenPhases,
  halfOpenSockets: options.halfOpen,
  flood,
  redirectTargetHits: provider.redirectTargetHits(),
  upstreamCalls: provider.calls(),
  stopExit,
  loadStart,
  now: clock(),
};
printFigures(run);
printBlockFigures(tally, blocks);
console.log(machineLine);
const verdicts = { criteria: criteria(run), blocks: blockCriteria(tally, blocks), checks: checks(run) };
printVerdicts("criteria", verdicts.criteria);
printVerdicts("criteria (pathological lane)", verdicts.blocks);
printVerdicts("checks", verdicts.checks);
console.log(`\nin flight at kills (counted apart, not judged)\n  ${inFlightAtKills(run)}`);

await provider.close();
gatewayLoop.remove();
process.exit([...verdicts.criteria, ...verdicts.blocks, ...verdicts.checks].every((verdict) => verdict.pass) ? 0 : 1);
