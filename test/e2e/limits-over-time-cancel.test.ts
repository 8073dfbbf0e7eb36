import { type ChildProcess, spawn } from "node:child_process";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeUpstream } from "../support/fake-upstream.js";
import { upstreamEnvironment } from "../support/gateway-process.js";
import { openaiSdk, sdkSurfaces } from "../support/limits-clients.js";
import { type LimitsGateway, startLimitsGateway } from "../support/limits-gateway.js";
import { tempDatabase } from "../support/temp-state.js";

// A stream the client cancels gives its tokens_per_day reservation back (contract section 10, docs/contract.md
// "Limits over time": "a call the client cancels before its end gives its estimate back"), through each SDK.
//
// On a SQLite file, whose commit at a call's end takes longer than a turn: a rejection left unhandled meanwhile would
// end the gateway process, as a client cancelling a stream once did (shown below against a gateway process).

const adminKey = "limits-cancel-admin-key";
let gateway: LimitsGateway;

beforeAll(async () => {
  gateway = await startLimitsGateway({
    PROMPTGATE_KEY_MODE: "keys",
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_DB: tempDatabase(),
    OPENAI_API_KEY: "sk-server-openai-cancel-000111",
    GEMINI_API_KEY: "AIzaServerGeminiCancel000222",
    ANTHROPIC_API_KEY: "sk-ant-server-cancel-333",
  });
});
afterAll(() => gateway?.close());
beforeEach(() => {
  gateway.upstream.received.length = 0;
  gateway.upstream.answerWith(undefined);
});

function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gateway.url}/promptgate/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json", ...init.headers },
  });
}

async function tokensUsed(id: string): Promise<number> {
  const response = await admin(`/keys/${id}/limits`);
  expect(response.status).toBe(200);
  const { windows } = (await response.json()) as { windows: { window: string; used: number }[] };
  const window = windows.find((each) => each.window === "tokens_per_day");
  expect(window).toBeDefined();
  return (window as { used: number }).used;
}

describe.each(sdkSurfaces)("a cancelled $name stream under tokens_per_day", (surface) => {
  it("holds the call's estimate while it runs and gives it back once the client cancels", async () => {
    gateway.clock.set("2026-12-08T15:00:00.000Z");
    const made = await admin("/keys", {
      method: "POST",
      body: JSON.stringify({ name: `cancel-${surface.name}`, limits: { tokens_per_day: 1_000_000 } }),
    });
    expect(made.status).toBe(201);
    const { id, key } = (await made.json()) as { id: string; key: string };
    const held: ServerResponse[] = [];
    let readDuringStream: Promise<number> | undefined;
    gateway.upstream.answerWith((_request, response) => {
      held.push(response);
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.write(surface.firstStreamEvent);
      readDuringStream = tokensUsed(id);
    });
    const headers = await surface.cancelStream(gateway.url, key);
    // The answer's headers count the call's estimate (conservative_total_chars / chars_per_token).
    const estimate = 1_000_000 - Number(headers.get("x-ratelimit-remaining-tokens"));
    expect(estimate).toBeGreaterThan(surface.firstStreamTokens);
    expect(headers.get("x-ratelimit-limit-tokens")).toBe("1000000");
    expect(gateway.upstream.received).toHaveLength(1);
    // While the provider was answering, the window held the estimate.
    expect(await readDuringStream).toBe(estimate);
    // Once the cancellation reached the gateway the estimate is given back. Anthropic's message_start reports the
    // usage so far (5 + 1 here): the window then holds that reported usage, not the estimate.
    const deadline = Date.now() + 2_000;
    let used = await tokensUsed(id);
    while (used !== surface.firstStreamTokens && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      used = await tokensUsed(id);
    }
    expect(used).toBe(surface.firstStreamTokens);
    for (const response of held) response.destroy();
  });
});

/** Starts the gateway as `npm start` does, resolving with its URL and how it exited (when it does). */
async function gatewayProcess(environment: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/runtime/node/main.ts"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", PROMPTGATE_LOG: "silent", ...environment },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stderr })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const found = /promptgate listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (found !== undefined) resolve(found);
    });
    void exited.then(({ code }) => reject(new Error(`exited with ${code} before listening: ${stderr}`)));
  });
  return { url, exited, kill: () => child.kill("SIGKILL") };
}

describe("a gateway process on a SQLite file", () => {
  it("survives a client cancelling a stream, and answers the next request", async () => {
    const upstream = await startFakeUpstream();
    const started = await gatewayProcess({
      ...upstreamEnvironment(upstream),
      OPENAI_API_KEY: "sk-server-openai-cancel-000111",
      PROMPTGATE_DB: tempDatabase(),
    });
    try {
      upstream.answerWith((_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write(openaiSdk.firstStreamEvent);
      });
      await openaiSdk.cancelStream(started.url, "sk-client-own-key");
      const outcome = await Promise.race([
        started.exited,
        new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 1_500)),
      ]);
      expect(outcome).toBe("running");
      expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
    } finally {
      started.kill();
      await upstream.close();
    }
  }, 30_000);
});
