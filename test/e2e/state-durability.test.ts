import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { type GatewayProcess, startGatewayProcess, upstreamEnvironment } from "../support/gateway-process.js";
import { heldOutput } from "../support/held-output.js";
import { copyPolicies, editPolicy, tempDatabase, withLimit } from "../support/temp-state.js";

let upstream: FakeUpstream;
let gateway: GatewayProcess;
/** The last answer's headers, as the SDKs' fetch hook saw them. */
let lastHeaders: Headers | undefined;

/** What the killed process left behind, as its clients saw it. */
const before = { cacheName: "", cacheChars: 0, responseId: "", historyChars: 0, frozenRef: "", frozenCallRef: "" };
const adminKey = "durability-admin-key";

const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init);
  lastHeaders = response.headers;
  return response;
};

function lastSize(): Record<string, unknown> & { policy: string; total_chars: number } {
  return JSON.parse(lastHeaders?.get("x-promptgate-prompt-size") ?? "null");
}

const gemini = () =>
  new GoogleGenAI({
    apiKey: "client-key",
    httpOptions: { baseUrl: `${gateway.url}/policies/investigation.bounded/gemini`, fetch: recordingFetch },
  });

const openai = (caseId?: string) =>
  new OpenAI({
    apiKey: "sk-client",
    baseURL: `${gateway.url}/policies/investigation.bounded/openai/v1`,
    maxRetries: 0,
    fetch: recordingFetch,
    ...(caseId === undefined ? {} : { defaultHeaders: { "x-promptgate-case": caseId } }),
  });

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const policies = copyPolicies();
  const environment = {
    ...upstreamEnvironment(upstream),
    PROMPTGATE_POLICIES: policies,
    PROMPTGATE_DB: tempDatabase(),
    PROMPTGATE_ADMIN_KEY: adminKey,
  };
  gateway = await startGatewayProcess(environment);

  const cache = await gemini().caches.create({
    model: "gemini-test",
    config: { systemInstruction: "s".repeat(500), contents: "c".repeat(1_500) },
  });
  before.cacheName = cache.name ?? "";
  before.cacheChars = lastSize().total_chars;

  // Under a case, so that the follow-up after the policy change runs on the same (frozen) version: a session
  // never continues across a policy change.
  const turn = await openai("R1").responses.create({ model: "gpt-test", input: "r".repeat(700) });
  before.responseId = turn.id;
  before.historyChars = 700 + heldOutput(turn);

  await openai("D1").chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
  before.frozenRef = lastSize().policy;
  before.frozenCallRef = lastHeaders?.get("x-promptgate-ref") ?? "";

  // No shutdown code runs: whatever the gateway had not committed is lost.
  await gateway.kill();
  editPolicy(policies, "investigation.bounded.toml", withLimit(30_000));
  gateway = await startGatewayProcess(environment);
}, 60_000);
afterAll(async () => {
  await gateway.kill();
  await upstream.close();
});

describe("state after the gateway process is killed and a new one starts on the same database", () => {
  it("recorded the cache, the response and the freeze before the kill", () => {
    expect(before.cacheName).toMatch(/^cachedContents\//);
    expect(before.cacheChars).toBe(2_000);
    expect(before.responseId).toMatch(/^resp_/);
    expect(before.frozenRef).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
  });

  it("still counts the cached prefix's characters in a new generateContent", async () => {
    await gemini().models.generateContent({
      model: "gemini-test",
      contents: "hello",
      config: { cachedContent: before.cacheName },
    });
    expect(lastSize()).toMatchObject({ cache_prefix_chars: before.cacheChars, message_chars: 5 });
    expect(lastSize()).not.toHaveProperty("cache_prefix_estimated");
  });

  it("still counts the stored response history in a follow-up turn", async () => {
    await openai("R1").responses.create({ model: "gpt-test", input: "next", previous_response_id: before.responseId });
    expect(lastSize()).toMatchObject({ cache_prefix_chars: before.historyChars, message_chars: 4 });
  });

  it("keeps the frozen case on its version while a new case gets the changed file's", async () => {
    const call = (caseId: string) =>
      openai(caseId).chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
    await call("D1");
    expect(lastSize()).toMatchObject({ policy: before.frozenRef, limit_chars: 20_000 });
    await call("D2");
    expect(lastSize().policy).not.toBe(before.frozenRef);
    expect(lastSize()).toMatchObject({ limit_chars: 30_000 });
  });

  it("keeps the call records made before the kill", async () => {
    const response = await fetch(`${gateway.url}/promptgate/admin/calls?case=D1`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const { calls } = (await response.json()) as { calls: { ref: string; policy: string; decision: string }[] };
    expect(calls[0]).toMatchObject({ ref: before.frozenCallRef, policy: before.frozenRef, decision: "sent" });
  });
});
