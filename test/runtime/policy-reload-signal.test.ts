import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { copyPolicies, editPolicy, withLimit } from "../support/temp-state.js";

const listening = /promptgate listening on (http:\/\/[^\s"]+)/;
let child: ChildProcess | undefined;
let folder: string | undefined;

afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child?.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

/** The gateway as `npm start` runs it, in its own process; resolves with its URL and its stdout so far. */
function startProcess(policies: string): Promise<{ url: string; stdout: () => string }> {
  const started = spawn(process.execPath, ["--import", "tsx", "src/runtime/node/main.ts"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", PROMPTGATE_DB: "memory", PROMPTGATE_POLICIES: policies },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = started;
  let stdout = "";
  let stderr = "";
  started.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    started.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const url = listening.exec(stdout)?.[1];
      if (url !== undefined) resolve({ url, stdout: () => stdout });
    });
    started.once("exit", (code) => reject(new Error(`The gateway exited with ${code} before listening: ${stderr}`)));
  });
}

async function boundedRef(url: string): Promise<string | undefined> {
  const { policies } = (await (await fetch(`${url}/promptgate/policies`)).json()) as {
    policies: Array<{ ref: string; name: string; current: boolean }>;
  };
  return policies.find((policy) => policy.name === "investigation.bounded" && policy.current)?.ref;
}

describe("SIGHUP sent to the gateway process", () => {
  it("reloads the policy folder and the process keeps serving", async () => {
    folder = copyPolicies();
    const gateway = await startProcess(folder);
    const before = await boundedRef(gateway.url);
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
    child?.kill("SIGHUP");
    for (let attempt = 0; attempt < 200 && !gateway.stdout().includes("policies_reloaded"); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(gateway.stdout()).toContain('"event":"policies_reloaded"');
    expect(child?.exitCode).toBeNull();
    const after = await boundedRef(gateway.url);
    expect(after).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
    expect(after).not.toBe(before);
  }, 30_000);
});
