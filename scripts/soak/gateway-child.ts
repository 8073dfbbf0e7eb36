import { type ChildProcess, spawn } from "node:child_process";
import { cpuSeconds, memoryMiB } from "../../bench/processes.js";

/** One gateway process, from its start to its end. */
export interface Lifetime {
  index: number;
  pid: number;
  /** Soak time (ms since the soak began) at which it was listening. */
  startedAt: number;
  endedAt?: number;
  /** Why it ended: the soak's SIGKILL, its SIGTERM at the end of the soak, or on its own (a crash). */
  end?: "killed" | "stopped" | "crashed";
  /** Set just before the soak signals it, so that a request it cuts is known as cut even before the exit is seen. */
  signalled?: NodeJS.Signals;
  exit?: string;
  /** RSS in MiB, sampled every few seconds: `at` is soak time. */
  rss: Array<{ at: number; mib: number }>;
  /** The kernel's high-water mark of its RSS (VmHWM) in MiB at the last sample: the peak between samples too. */
  peakMiB: number;
  /** CPU seconds (user + system, all threads) at the last sample. */
  cpuSeconds: number;
}

/** The gateway as a child process that the soak can kill and restart on the same database. */
export interface GatewayChild {
  /** Resolves once a process is listening. */
  ready(): Promise<string>;
  /** The lifetime of the process currently running, or the last one. */
  current(): Lifetime;
  lifetimes: Lifetime[];
  /** SIGKILL, then a new process on the same database; resolves once it listens. */
  killAndRestart(): Promise<void>;
  /** SIGTERM (the graceful drain); resolves with how the process exited. */
  stop(): Promise<string>;
  sampleRss(): void;
  /** Log lines on stdout, internal-error lines among them, lines on stderr, and records it could not store. */
  counts(): { logLines: number; internalErrors: number; stderrLines: number; recordFailures: number };
  /** The last lines the processes wrote on stderr. */
  stderrTail(): string;
}

const listening = /promptgate listening on (http:\/\/\S+)/;

/** More to start each process with, and what to do once one listens. */
export interface ChildHooks {
  /** Node arguments before the entry, e.g. a preloaded module. */
  nodeArguments?: readonly string[];
  listening?(pid: number, origin: string): void;
}

/**
 * Starts `src/runtime/node/main.ts` as `npm start` does (one Node process with tsx as a loader,
 * so that SIGKILL reaches the server itself) on a free port, and restarts it if it ever exits on
 * its own, counting that as a crash.
 */
export async function startGatewayChild(
  environment: Record<string, string>,
  clock: () => number,
  hooks: ChildHooks = {},
) {
  const lifetimes: Lifetime[] = [];
  let child: ChildProcess | undefined;
  let up: Promise<string> = Promise.resolve("");
  let expectedEnd: Lifetime["end"];
  let logLines = 0;
  let internalErrors = 0;
  let stderrLines = 0;
  let recordFailures = 0;
  let stderr = "";

  const launch = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const nodeArguments = ["--import", "tsx", ...(hooks.nodeArguments ?? []), "src/runtime/node/main.ts"];
      const process_ = spawn(process.execPath, nodeArguments, {
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...environment },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = process_;
      expectedEnd = undefined;
      let head = "";
      let listeningAt: Lifetime | undefined;
      const timer = setTimeout(() => reject(new Error(`The gateway did not start in 30 s: ${stderr}`)), 30_000);
      process_.stdout?.on("data", (chunk: Buffer) => {
        const text = chunk.toString("utf8");
        for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) logLines++;
        for (let at = text.indexOf('"internal_error"'); at !== -1; at = text.indexOf('"internal_error"', at + 1))
          internalErrors++;
        if (listeningAt !== undefined) return;
        head += text;
        const url = listening.exec(head)?.[1];
        if (url === undefined) return;
        clearTimeout(timer);
        listeningAt = {
          index: lifetimes.length + 1,
          pid: process_.pid ?? 0,
          startedAt: clock(),
          rss: [],
          peakMiB: 0,
          cpuSeconds: 0,
        };
        lifetimes.push(listeningAt);
        hooks.listening?.(listeningAt.pid, url);
        resolve(url);
      });
      process_.stderr?.on("data", (chunk: Buffer) => {
        const text = chunk.toString("utf8");
        stderrLines += text.split("\n").length - 1;
        recordFailures += text.split("a call record could not be stored").length - 1;
        stderr = (stderr + text).slice(-4_000);
      });
      process_.once("exit", (code, signal) => {
        clearTimeout(timer);
        if (listeningAt === undefined) {
          reject(new Error(`The gateway exited (${code ?? signal}) before it listened: ${stderr}`));
          return;
        }
        listeningAt.endedAt = clock();
        listeningAt.end = expectedEnd ?? "crashed";
        listeningAt.exit = signal ?? `code ${code}`;
        if (expectedEnd === undefined) {
          process.stderr.write(`soak: the gateway (pid ${listeningAt.pid}) exited on its own: ${signal ?? code}\n`);
          up = launch();
          // Awaited by the lanes through ready(); a failed restart must not also end the soak as unhandled.
          up.catch(() => undefined);
        }
      });
    });

  const exited = (target: ChildProcess, signal: NodeJS.Signals, end: Lifetime["end"]) =>
    new Promise<string>((resolve) => {
      expectedEnd = end;
      const lifetime = lifetimes.at(-1);
      if (lifetime !== undefined) lifetime.signalled = signal;
      if (target.exitCode !== null || target.signalCode !== null) {
        resolve(target.signalCode ?? `code ${target.exitCode}`);
        return;
      }
      target.once("exit", (code, signalCode) => resolve(signalCode ?? `code ${code}`));
      target.kill(signal);
    });

  const sample = () => {
    const lifetime = lifetimes.at(-1);
    if (lifetime === undefined || lifetime.endedAt !== undefined) return;
    const memory = memoryMiB(lifetime.pid);
    // A process that is being killed may already be a zombie, whose status has no memory lines.
    if (memory !== undefined && Number.isFinite(memory.rss) && Number.isFinite(memory.peak)) {
      lifetime.rss.push({ at: clock(), mib: memory.rss });
      lifetime.peakMiB = memory.peak;
    }
    lifetime.cpuSeconds = cpuSeconds(lifetime.pid) ?? lifetime.cpuSeconds;
  };

  up = launch();
  await up;
  const gateway: GatewayChild = {
    ready: () => up,
    current: () => lifetimes.at(-1)!,
    lifetimes,
    async killAndRestart() {
      const target = child;
      // Lanes that ask for the gateway meanwhile wait for the new process instead of finding none.
      sample();
      up = (async () => {
        if (target !== undefined) await exited(target, "SIGKILL", "killed");
        return launch();
      })();
      await up;
    },
    stop: () => (child === undefined ? Promise.resolve("not running") : exited(child, "SIGTERM", "stopped")),
    sampleRss: sample,
    counts: () => ({ logLines, internalErrors, stderrLines, recordFailures }),
    stderrTail: () => stderr,
  };
  return gateway;
}
