import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { parseArgs } from "node:util";
import { gatewayPath, openaiPath } from "./fixtures.js";

/** A process the bench started and measures from /proc. */
export interface BenchProcess {
  readonly pid: number;
  /** Stops it: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The Node options of the gateway as `npm start` starts it (package.json's `start` script): the bench gives them to
 * every promptgate it loads and to the proxies it compares promptgate with, so that a ratio compares the code, not
 * the options.
 */
export const gatewayNodeOptions: readonly string[] = (() => {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    scripts: { start: string };
  };
  const words = manifest.scripts.start.split(/\s+/);
  const node = words.indexOf("node");
  const entry = words.indexOf("dist/runtime/node/main.js");
  // A start script of another shape would hand the bench the wrong options without a word: it stops instead.
  if (node === -1 || entry < node) {
    throw new Error(
      `package.json's start script is not "… node [options] dist/runtime/node/main.js": ${manifest.scripts.start}`,
    );
  }
  return words.slice(node + 1, entry);
})();

/** How a child announces that it is ready, from its stdout. */
export type ReadyMatcher = (stdout: string) => number | undefined;

/** The bench children's ready line: `{"ready":true,"port":N}`. */
export const readyLine: ReadyMatcher = (stdout) => {
  const line = stdout.split("\n").find((candidate) => candidate.startsWith('{"ready":true'));
  return line === undefined ? undefined : (JSON.parse(line) as { port: number }).port;
};

/**
 * The environment of a compiled gateway under load: any free port on loopback, the memory store, OpenAI calls to the
 * fake upstream at `upstream` with no server-held key (the bench's requests carry one), no admin key, one process.
 */
export function gatewayEnvironment(upstream: string): Record<string, string> {
  return {
    PORT: "0",
    HOST: "127.0.0.1",
    PROMPTGATE_DB: "memory",
    PROMPTGATE_UPSTREAM_OPENAI: `${upstream}/v1`,
    OPENAI_API_KEY: "",
    PROMPTGATE_ADMIN_KEY: "",
    PROMPTGATE_WORKERS: "1",
  };
}

/** promptgate's start-up line: `promptgate listening on http://127.0.0.1:PORT (…)`. */
export const promptgateListening: ReadyMatcher = (stdout) => {
  const port = /promptgate listening on http:\/\/[^:\s]+:(\d+)/.exec(stdout)?.[1];
  return port === undefined ? undefined : Number(port);
};

/**
 * Starts `node …args` and resolves with the process and its port once `ready` finds the port in its stdout,
 * or, when `ready` is a port number, once that port accepts connections. With `wrapper` (a command and its
 * arguments, e.g. valgrind's), node runs under it.
 */
export function startProcess(
  args: readonly string[],
  environment: Record<string, string>,
  ready: ReadyMatcher | number,
  options: { cwd?: string; timeoutMs?: number; onStdout?: (chunk: string) => void; wrapper?: readonly string[] } = {},
): Promise<{ process: BenchProcess; port: number }> {
  const [command = process.execPath, ...commandArgs] = [...(options.wrapper ?? []), process.execPath, ...args];
  const child = spawn(command, commandArgs, {
    cwd: options.cwd,
    env: { ...process.env, ...environment },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const handle: BenchProcess = {
    pid: child.pid ?? 0,
    async stop(graceMs = 3_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not start in time: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    let started = false;
    const resolveOnce = (port: number) => {
      if (started) return;
      started = true;
      clearTimeout(timer);
      resolve({ process: handle, port });
    };
    if (typeof ready === "number") {
      waitForPort(ready, options.timeoutMs).then(() => resolveOnce(ready), reject);
    }
    child.stdout.on("data", (chunk: Buffer) => {
      // Only the start-up output is looked at; later output goes to `onStdout`, or is read and dropped, so that the
      // pipe never fills.
      if (started || typeof ready === "number") {
        options.onStdout?.(chunk.toString("utf8"));
        return;
      }
      stdout += chunk.toString("utf8");
      const port = ready(stdout);
      if (port !== undefined) resolveOnce(port);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited with ${code} before it was ready: ${stderr}`));
    });
  });
}

/** The proxies promptgate is compared with: the bare Node proxy, and the same work on promptgate's stack (Hono). */
export type ProxyFile = "bench/bare-proxy.ts" | "bench/hono-proxy.ts";

/**
 * Starts a proxy to `upstream` with `npm start`'s Node options (`nodeOptions` after them), as every promptgate it is
 * compared with starts; with `floor`, the Hono proxy also does the parse-and-validate floor's work (see its file).
 */
export function startProxy(
  file: ProxyFile,
  upstream: string,
  options: {
    cwd: string;
    nodeOptions?: readonly string[];
    onStdout?: (chunk: string) => void;
    wrapper?: readonly string[];
    timeoutMs?: number;
    floor?: boolean;
  },
): Promise<{ process: BenchProcess; port: number }> {
  const { nodeOptions = [], floor = false, ...rest } = options;
  const args = [...gatewayNodeOptions, ...nodeOptions, "--import", "tsx", file];
  return startProcess(args, { BENCH_UPSTREAM: upstream, BENCH_FLOOR: floor ? "1" : "" }, readyLine, rest);
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
export async function waitForPort(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`Nothing listens on port ${port}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A free TCP port on 127.0.0.1 (for a child that cannot be told to pick one itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU seconds a process has used so far (all its threads), or undefined without /proc. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return undefined;
  }
}

/** Current (`VmRSS`) and peak (`VmHWM`) resident memory of a process in MiB, or undefined without /proc. */
export function memoryMiB(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/** CPU seconds the whole machine has been busy (all cores, steal excluded) and stolen by the hypervisor. */
export function machineCpuSeconds(): { busy: number; steal: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    // cpu  user nice system idle iowait irq softirq steal …
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return {
      busy: ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)) / clockTicks,
      steal: (steal ?? 0) / clockTicks,
    };
  } catch {
    return undefined;
  }
}

/**
 * A process the finding tools (`bench:gc`, `bench:syscalls`) load in turn: the bare proxy and the same proxy on Hono
 * take the provider's own path, promptgate its policy's. `start` adds Node options after `npm start`'s.
 */
export interface ComparedTarget {
  key: string;
  path: string;
  start: (
    nodeOptions: string[],
    onStdout?: (chunk: string) => void,
  ) => Promise<{ process: BenchProcess; port: number }>;
}

/** The bare proxy, the same proxy on Hono and the compiled promptgate, all in front of `upstream`. */
export function comparedTargets(upstream: string, cwd: string): ComparedTarget[] {
  const proxy =
    (file: ProxyFile): ComparedTarget["start"] =>
    (nodeOptions, onStdout) =>
      startProxy(file, upstream, { cwd, nodeOptions, ...(onStdout === undefined ? {} : { onStdout }) });
  return [
    { key: "bare proxy", path: openaiPath, start: proxy("bench/bare-proxy.ts") },
    { key: "Hono proxy", path: openaiPath, start: proxy("bench/hono-proxy.ts") },
    {
      key: "promptgate",
      path: gatewayPath,
      start: (nodeOptions, onStdout) =>
        startProcess(
          [...gatewayNodeOptions, ...nodeOptions, "dist/runtime/node/main.js"],
          gatewayEnvironment(upstream),
          promptgateListening,
          { cwd, ...(onStdout === undefined ? {} : { onStdout }) },
        ),
    },
  ];
}

/** The whole number above 0 that option `--name` gave as `text`; else an error that says so, and how to call the tool. */
export function wholeCount(name: string, text: string, usage = ""): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a whole number above 0. ${usage}`.trim());
  return value;
}

/** `--connections N --seconds S --warm-up W` of a finding tool, with its own defaults for the last two. */
export function loadOptions(defaults: { seconds: number; warmUp: number }): {
  connections: number;
  seconds: number;
  warmUp: number;
} {
  const { values } = parseArgs({
    options: {
      connections: { type: "string", default: "64" },
      seconds: { type: "string", default: String(defaults.seconds) },
      "warm-up": { type: "string", default: String(defaults.warmUp) },
    },
  });
  return {
    connections: Number(values.connections),
    seconds: Number(values.seconds),
    warmUp: Number(values["warm-up"]),
  };
}
