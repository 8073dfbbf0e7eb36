/*
 * Instructions per call, counted instead of timed: `npm run bench:instructions -- [--warm-up W] [--calls N]
 * [--variant NAME=DIR …]`. Runs the bare proxy and the compiled gateway of each variant (default: this folder's
 * dist/, `npm run build` first) under valgrind (cachegrind, no cache simulation), twice each and side by side: one
 * process serves W sequential calls, the other W + N, of the realistic call against the fake upstream. The difference
 * of their counts, divided by N, is what a warm call costs in user-space instructions: V8's compiler has done its
 * work during the first W, and start-up and shutdown cancel out. On a shared machine whose speed drifts by tens of
 * per cent within minutes (see side-by-side.ts), this count moved by up to 3.3 % between four runs of one build (a
 * cause not pinned down), so a change of 5 % or more can be seen in one run. It leaves out what the kernel does (the
 * socket calls, loopback's TCP), which the bare proxy and promptgate share, so its ratio to the bare proxy is larger
 * than a CPU-time ratio. Needs valgrind (Debian: `apt-get install valgrind`); a variant takes about three minutes.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { chatRequest, gatewayPath, realisticMessageChars } from "./fixtures.js";
import {
  gatewayEnvironment,
  gatewayNodeOptions,
  promptgateListening,
  readyLine,
  startProcess,
  startProxy,
  wholeCount,
} from "./processes.js";

const usage = "npm run bench:instructions -- [--warm-up W] [--calls N] [--variant NAME=DIR …]";
const { values } = parseArgs({
  options: {
    "warm-up": { type: "string", default: "3000" },
    calls: { type: "string", default: "4000" },
    variant: { type: "string", multiple: true, default: [] },
  },
});
const warmUp = wholeCount("warm-up", values["warm-up"], usage);
const calls = wholeCount("calls", values.calls, usage);
const root = join(import.meta.dirname, "..");
const variants = (values.variant.length === 0 ? ["promptgate=."] : values.variant).map((spec) => {
  const cut = spec.indexOf("=");
  if (cut < 1) throw new Error(`--variant ${spec}: give NAME=DIR. ${usage}`);
  return { name: spec.slice(0, cut), directory: resolve(spec.slice(cut + 1)) };
});
try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" });
} catch {
  throw new Error("bench:instructions needs valgrind on the PATH (Debian: apt-get install valgrind).");
}

const body = Buffer.from(JSON.stringify(chatRequest(realisticMessageChars)));
const headers = { "content-type": "application/json", authorization: "Bearer sk-bench", "content-length": body.length };
const scratch = mkdtempSync(join(tmpdir(), "promptgate-instructions-"));
const upstream = await startProcess(["--import", "tsx", "bench/fake-upstream.ts"], {}, readyLine, { cwd: root });

/** One process of `target` under cachegrind serving `total` sequential calls; resolves with its instruction count. */
async function counted(target: (typeof targets)[number], total: number): Promise<number> {
  const out = join(scratch, `${target.name}-${total}.cg`);
  const wrapper = ["valgrind", "--tool=cachegrind", "--cache-sim=no", `--cachegrind-out-file=${out}`];
  const started = await target.start(wrapper);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let sent = 0; sent < total; sent++) await call(agent, started.port, target.path);
  } finally {
    agent.destroy();
    await started.process.stop(120_000);
  }
  const summary = /^summary: (\d+)/m.exec(readFileSync(out, "utf8"))?.[1];
  if (summary === undefined) throw new Error(`${out} holds no summary line.`);
  return Number(summary);
}

function call(agent: Agent, port: number, path: string): Promise<void> {
  return new Promise((done, fail) => {
    const sent = request({ host: "127.0.0.1", port, path, method: "POST", agent, headers }, (answer) => {
      answer.resume();
      answer.on("end", () =>
        answer.statusCode === 200 ? done() : fail(new Error(`${path} answered ${answer.statusCode}.`)),
      );
    });
    sent.on("error", fail);
    sent.end(body);
  });
}

const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
const startTimeoutMs = 300_000;
const targets = [
  {
    name: "bare proxy",
    path: "/v1/chat/completions",
    start: (wrapper: readonly string[]) =>
      startProxy("bench/bare-proxy.ts", upstreamUrl, { cwd: root, wrapper, timeoutMs: startTimeoutMs }),
  },
  ...variants.map((variant) => ({
    name: variant.name,
    path: gatewayPath,
    start: (wrapper: readonly string[]) =>
      startProcess(
        [...gatewayNodeOptions, "dist/runtime/node/main.js"],
        gatewayEnvironment(upstreamUrl),
        promptgateListening,
        { cwd: variant.directory, wrapper, timeoutMs: startTimeoutMs },
      ),
  })),
];

const rows: { name: string; perCall: number }[] = [];
try {
  for (const target of targets) {
    const [short, long] = await Promise.all([counted(target, warmUp), counted(target, warmUp + calls)]);
    rows.push({ name: target.name, perCall: (long - short) / calls });
    console.error(`${target.name}: ${((long - short) / calls / 1000).toFixed(1)} k instructions per call`);
  }
} finally {
  await upstream.process.stop();
  rmSync(scratch, { recursive: true, force: true });
}

const bare = rows[0]?.perCall ?? 1;
const reference = rows[1]?.perCall ?? 1;
console.log(`\n${calls} calls after ${warmUp} to warm, one connection, user-space instructions per call\n`);
console.log("| target | k instructions per call | × bare proxy | × first variant |\n|---|---:|---:|---:|");
for (const [index, row] of rows.entries()) {
  const againstReference = index === 0 ? "" : (row.perCall / reference).toFixed(3);
  console.log(
    `| ${row.name} | ${(row.perCall / 1000).toFixed(1)} | ${(row.perCall / bare).toFixed(2)} | ${againstReference} |`,
  );
}
