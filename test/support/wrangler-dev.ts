import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A `wrangler dev` of this repository's worker on loopback, with its own local D1 state. */
export interface WranglerDev {
  url: string;
  /** What wrangler printed so far, for failure messages. */
  output(): string;
  /** Stops wrangler and its workerd (their process group), waiting at most a few seconds. */
  stop(): Promise<void>;
}

const root = join(import.meta.dirname, "..", "..");

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("No free port.");
  return address.port;
}

function exited(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** Starts `wrangler dev` with these `[vars]` overrides and resolves once /healthz answers (at most `readyMs`). */
export async function startWranglerDev(vars: Record<string, string>, readyMs = 90_000): Promise<WranglerDev> {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), "promptgate-wrangler-"));
  const args = [
    join(root, "node_modules", "wrangler", "bin", "wrangler.js"),
    "dev",
    ...["--ip", "127.0.0.1", "--port", String(port), "--inspector-port", "0"],
    ...["--persist-to", state, "--show-interactive-dev-session=false", "--log-level", "warn"],
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  // Its own process group, so that stopping it stops the workerd it starts too.
  const child = spawn(process.execPath, args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const url = `http://127.0.0.1:${port}`;
  const dev: WranglerDev = {
    url,
    output: () => output,
    async stop() {
      signalGroup(child, "SIGTERM");
      if (!(await exited(child, 5_000))) {
        signalGroup(child, "SIGKILL");
        await exited(child, 5_000);
      }
      rmSync(state, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + readyMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return dev;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await dev.stop();
  throw new Error(`wrangler dev did not become ready within ${readyMs} ms:\n${output.slice(-4_000)}`);
}
