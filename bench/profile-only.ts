/*
 * A CPU profile of promptgate under load, alone (the last phase of `npm run bench`, without the
 * rest) of the compiled gateway in dist/ (`npm run build` first): `npx tsx bench/profile-only.ts [seconds]`. For finding what to cut; the figures that count
 * come from a whole `npm run bench`.
 */
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { summarizeProfile } from "./cpu-profile.js";
import { chatRequest, gatewayPath, realisticMessageChars } from "./fixtures.js";
import { runLoad } from "./load.js";
import { gatewayEnvironment, gatewayNodeOptions, promptgateListening, readyLine, startProcess } from "./processes.js";

const seconds = Number(process.argv[2] ?? 8);
/** `--keep DIR`: keep the .cpuprofile there (for Chrome DevTools or a closer look) instead of deleting it. */
const keepAt = process.argv.indexOf("--keep");
const keep = keepAt === -1 ? undefined : process.argv[keepAt + 1];
const root = join(import.meta.dirname, "..");
const tsx = ["--import", "tsx"];
const body = Buffer.from(JSON.stringify(chatRequest(realisticMessageChars)));
const directory = keep ?? join(tmpdir(), `promptgate-profile-${Date.now()}`);
await mkdir(directory, { recursive: true });

const upstream = await startProcess([...tsx, "bench/fake-upstream.ts"], {}, readyLine, { cwd: root });
const spawned = Date.now();
const gateway = await startProcess(
  [...gatewayNodeOptions, "--cpu-prof", "--cpu-prof-dir", directory, "dist/runtime/node/main.js"],
  gatewayEnvironment(`http://127.0.0.1:${upstream.port}`),
  promptgateListening,
  { cwd: root },
);
const target = {
  key: "promptgate",
  label: "promptgate",
  url: `http://127.0.0.1:${gateway.port}${gatewayPath}`,
  headers: { authorization: "Bearer sk-bench" },
  pid: gateway.process.pid,
};
try {
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
  // As long a warm-up as `npm run bench` gives (see its settings): a profile of V8 still compiling shows the compiler.
  await runLoad(target, body, connections, { seconds: 20 }, upstream.process.pid);
  const skipMs = Date.now() - spawned;
  const sample = await runLoad(target, body, connections, { seconds }, upstream.process.pid);
  console.log(`${sample.requestsPerSecond.toFixed(0)} req/s under the profiler, ${sample.failed} failed`);
  await gateway.process.stop(15_000);
  const summary = await summarizeProfile(directory, skipMs, 30);
  console.log(JSON.stringify(summary, null, 1));
} finally {
  await gateway.process.stop();
  await upstream.process.stop();
  if (keep === undefined) await rm(directory, { recursive: true, force: true });
}
