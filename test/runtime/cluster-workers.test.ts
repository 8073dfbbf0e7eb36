import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tempDatabase } from "../support/temp-state.js";

// PROMPTGATE_WORKERS=N: N gateway processes on one port, sharing the store; a worker that dies is restarted and
// logged, SIGTERM drains them all, and a configuration that cannot work ends the primary instead of a restart loop.

interface Primary {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startPrimary(environment: Record<string, string>): Primary {
  // With the Node option `npm start` gives, which every worker must run with too.
  const child = spawn(process.execPath, ["--no-memory-reducer", "--import", "tsx", "src/runtime/node/main.ts"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", PROMPTGATE_LOG: "info", ...environment },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The workers' process ids, from their listening lines. */
function workerPids(primary: Primary): number[] {
  return [...primary.stdout().matchAll(/"event":"listening".*?"pid":(\d+)/g)].map((match) => Number(match[1]));
}

function urlOf(primary: Primary): string {
  const url = /"url":"(http:\/\/[^"]+)"/.exec(primary.stdout())?.[1];
  if (url === undefined) throw new Error("No listening line");
  return url;
}

async function chat(url: string, content: string): Promise<number> {
  const response = await fetch(`${url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }] }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe("PROMPTGATE_WORKERS", () => {
  it("serves one port from two processes, restarts one that dies, and drains both on SIGTERM", async () => {
    const primary = startPrimary({ PROMPTGATE_WORKERS: "2", PROMPTGATE_DB: tempDatabase() });
    try {
      await until(() => primary.stderr().includes("runs 2 worker processes"), "two workers");
      // The primary says so once both sockets listen; each worker writes its start-up line just after.
      await until(() => (primary.stdout().match(/"event":"listening"/g) ?? []).length === 2, "two start-up lines");
      const url = urlOf(primary);
      const statuses = await Promise.all(Array.from({ length: 40 }, (_, index) => chat(url, `call ${index}`)));
      expect(statuses).toEqual(Array(40).fill(200));

      const [victim, survivor] = workerPids(primary);
      process.kill(victim as number, "SIGKILL");
      await until(() => primary.stderr().includes(`worker ${victim} ended (SIGKILL); starting another`), "a restart");
      await until(() => (primary.stdout().match(/"event":"listening"/g) ?? []).length === 3, "the new worker");
      const replacement = workerPids(primary)[2];
      expect(new Set([victim, survivor, replacement]).size).toBe(3);
      for (const pid of [survivor, replacement]) {
        expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toContain("--no-memory-reducer");
      }
      expect(await chat(url, "after the restart")).toBe(200);

      primary.child.kill("SIGTERM");
      expect(await primary.exited).toBe(0);
      expect(primary.stderr().match(/promptgate stopped on SIGTERM/g)).toHaveLength(2);
    } finally {
      primary.child.kill("SIGKILL");
    }
  }, 60_000);

  it("refuses a memory store shared by several workers, which would not be shared", async () => {
    const primary = startPrimary({ PROMPTGATE_WORKERS: "2", PROMPTGATE_DB: "memory" });
    expect(await primary.exited).toBe(1);
    expect(primary.stderr()).toContain("PROMPTGATE_DB=memory would give each process a state of its own");
  }, 30_000);

  it("ends the primary, not a restart loop, when the workers cannot start", async () => {
    const primary = startPrimary({
      PROMPTGATE_WORKERS: "2",
      PROMPTGATE_DB: tempDatabase(),
      PROMPTGATE_DEFAULT_POLICY: "no.such.policy",
    });
    expect(await primary.exited).toBe(1);
    expect(primary.stderr()).toMatch(/worker \d+ ended \(code 1\) before it listened/);
    expect(primary.stderr()).not.toContain("starting another");
  }, 30_000);
});
