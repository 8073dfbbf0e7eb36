import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { tsxLoader } from "../support/node-run.js";

// The gateway as `npm start` runs it, from any working directory: the TypeScript entry through tsx's loader.
const entry = resolve("src/runtime/node/main.ts");

/** Root ignores file permissions, so cases about them run the gateway as `nobody` there. */
export const asRoot = process.getuid?.() === 0;

/** How a gateway process ended, and what it wrote. */
export interface GatewayRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How to run it. */
export interface GatewayRunOptions {
  cwd?: string;
  /** Run as `nobody` when the tests run as root. */
  unprivileged?: boolean;
  /** Called once it listens, with its URL; then it is stopped with SIGTERM. */
  whileListening?: (url: string) => Promise<void>;
}

const listening = /promptgate listening on (http:\/\/[^\s"]+)/;

/**
 * Runs the gateway process until it exits, or until it listens (then runs `whileListening` and stops it
 * with SIGTERM). The configuration variables it is not given are unset, whatever the test's environment.
 */
export function runGateway(environment: Record<string, string>, options: GatewayRunOptions = {}): Promise<GatewayRun> {
  const env: Record<string, string | undefined> = { ...process.env, PORT: "0", HOST: "127.0.0.1", ...environment };
  for (const variable of Object.keys(env)) {
    if (variable.startsWith("PROMPTGATE_") && !(variable in environment)) delete env[variable];
  }
  const child: ChildProcess = spawn(process.execPath, ["--import", tsxLoader, entry], {
    cwd: options.cwd ?? process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.unprivileged && asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  let stdout = "";
  let stderr = "";
  let listened = false;
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    const url = listening.exec(stdout)?.[1];
    if (url === undefined || listened) return;
    listened = true;
    const during = options.whileListening?.(url) ?? Promise.resolve();
    during.finally(() => child.kill("SIGTERM")).catch(() => undefined);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`The gateway neither exited nor listened in time: ${stderr}`));
    }, 50_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}
