import { type ChildProcess, spawn } from "node:child_process";
import type { FakeUpstream } from "./fake-upstream.js";

/** A gateway running as its own Node process, as `npm start` runs it. */
export interface GatewayProcess {
  url: string;
  /** Ends the process with SIGKILL: no shutdown code runs, nothing is flushed or closed. */
  kill(): Promise<void>;
}

/** The variables that send all three surfaces to one fake upstream. */
export function upstreamEnvironment(upstream: FakeUpstream): Record<string, string> {
  return {
    PROMPTGATE_UPSTREAM_OPENAI: `${upstream.origin}/openai/v1`,
    PROMPTGATE_UPSTREAM_GEMINI: `${upstream.origin}/gemini`,
    PROMPTGATE_UPSTREAM_ANTHROPIC: `${upstream.origin}/anthropic`,
  };
}

const listening = /promptgate listening on (http:\/\/\S+)/;

/**
 * Starts `src/runtime/node/main.ts` in a child process on a free port and resolves with its
 * URL once it prints that it listens. One Node process (tsx as a loader), so SIGKILL reaches
 * the server itself and not a wrapper.
 */
export function startGatewayProcess(environment: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/runtime/node/main.ts"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...environment },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`The gateway process did not start in time: ${stderr}`));
    }, 20_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const url = listening.exec(stdout)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      resolve({ url, kill: () => killed(child) });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`The gateway process exited with ${code} before listening: ${stderr}`));
    });
  });
}

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
