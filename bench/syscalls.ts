/*
 * The system calls each target makes per request: `npm run bench:syscalls -- [--connections N] [--seconds S]
 * [--warm-up W]`. The bare proxy, the same proxy on Hono and promptgate (compiled, `npm start`'s Node options) are
 * each warmed up, then loaded for S seconds with `strace -c -f` attached to the process (every thread); the calls
 * strace counted are divided by the 2xx responses of that window. A gateway that writes, reads or wakes up more often
 * than the bare proxy per request shows here as a count, which unlike a timing does not move with the machine's load.
 * strace slows the process it watches, so the run's requests/s are not the target's: only the counts mean something.
 * Needs strace (Debian: `apt-get install strace`) and the right to trace one's own processes.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chatRequest, realisticMessageChars } from "./fixtures.js";
import { runLoad } from "./load.js";
import { comparedTargets, loadOptions, readyLine, startProcess } from "./processes.js";

const { connections, seconds, warmUp } = loadOptions({ seconds: 5, warmUp: 10 });
if (spawnSync("strace", ["-V"]).status !== 0) {
  console.error("bench:syscalls needs strace on the PATH (Debian: apt-get install strace).");
  process.exit(1);
}
const root = join(import.meta.dirname, "..");
const body = Buffer.from(JSON.stringify(chatRequest(realisticMessageChars)));

/** The calls of a `strace -c` summary by name: its rows are % time, seconds, usecs/call, calls, [errors,] syscall. */
function syscallCounts(summary: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of summary.split("\n")) {
    const columns = line.trim().split(/\s+/);
    const name = columns.at(-1) as string;
    const calls = Number(columns[3]);
    if (columns.length >= 5 && /^\d/.test(columns[0] as string) && name !== "total" && Number.isFinite(calls)) {
      counts.set(name, calls);
    }
  }
  return counts;
}

/** Runs `strace -c -f` on `pid` until the returned function is called; that resolves with its summary. */
async function traced(pid: number, file: string): Promise<() => Promise<string>> {
  const strace = spawn("strace", ["-c", "-f", "-p", String(pid), "-o", file], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  strace.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => strace.once("exit", resolve));
  // strace reports each thread it attached to on stderr; give it a moment to reach them all.
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (strace.exitCode !== null) throw new Error(`strace could not attach to ${pid}: ${stderr.trim()}`);
  return async () => {
    strace.kill("SIGINT");
    await exited;
    return readFile(file, "utf8");
  };
}

const upstream = await startProcess(["--import", "tsx", "bench/fake-upstream.ts"], {}, readyLine, { cwd: root });
const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
const perTarget = new Map<string, { counts: Map<string, number>; requests: number }>();
try {
  for (const { key, path, start } of comparedTargets(upstreamUrl, root)) {
    const started = await start([]);
    const target = {
      key,
      label: key,
      url: `http://127.0.0.1:${started.port}${path}`,
      headers: { authorization: "Bearer sk-bench" },
      pid: started.process.pid,
    };
    const file = join(tmpdir(), `promptgate-syscalls-${process.pid}-${started.process.pid}.txt`);
    try {
      await runLoad(target, body, connections, { seconds: warmUp }, upstream.process.pid);
      const stop = await traced(started.process.pid, file);
      const sample = await runLoad(target, body, connections, { seconds }, upstream.process.pid);
      perTarget.set(key, { counts: syscallCounts(await stop()), requests: Math.max(1, sample.ok) });
      if (sample.failed > 0) console.error(`${key}: ${sample.failed} requests failed under strace`);
    } finally {
      await started.process.stop(15_000);
      await rm(file, { force: true });
    }
  }
} finally {
  await upstream.process.stop();
}

/** A target's calls of one name per 2xx response. */
const perRequest = (key: string, name: string): number => {
  const measured = perTarget.get(key);
  return measured === undefined ? 0 : Number(((measured.counts.get(name) ?? 0) / measured.requests).toFixed(3));
};
const keys = [...perTarget.keys()];
// Every call one target makes at least once per hundred requests, the most frequent of promptgate's first.
const names = [...new Set([...perTarget.values()].flatMap(({ counts }) => [...counts.keys()]))]
  .filter((name) => keys.some((key) => perRequest(key, name) >= 0.01))
  .sort((a, b) => perRequest("promptgate", b) - perRequest("promptgate", a));
console.log(
  `${connections} connections, ${seconds} s under strace after ${warmUp} s of warm-up; system calls per 2xx response,` +
    ` every thread of the process (${keys.map((key) => `${key}: ${perTarget.get(key)?.requests} responses`).join(", ")}):`,
);
console.table(
  names.map((name) => ({ syscall: name, ...Object.fromEntries(keys.map((key) => [key, perRequest(key, name)])) })),
);
