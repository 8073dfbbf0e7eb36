import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { createIsolateDeps } from "../../src/runtime/workers/worker-deps.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";

// Named keys inside workerd: made, used and revoked through the admin API, kept in D1 (only as hashes). The app runs
// on the isolate's own dependencies in gateway-key mode, OpenAI's simulated stand-in as its upstream behind a
// recorder of what it received.

const adminKey = "admin-test-key";
const serverKey = "sk-edge-named-keys-server";

let app: ReturnType<typeof createApp>;
const received: { url: string; authorization: string | null }[] = [];
const records: CallRecord[] = [];

beforeAll(async () => {
  const isolate = await createIsolateDeps({
    ...env,
    PROMPTGATE_KEY_MODE: "keys",
    PROMPTGATE_OPEN_RELAY: "false",
    OPENAI_API_KEY: serverKey,
    PROMPTGATE_UPSTREAM_OPENAI: "http://upstream.promptgate.invalid/openai/v1",
  });
  expect(isolate.config.gatewayKeyMode).toBe(true);
  const simulated = createSimulatedProvider();
  const upstream = async (request: Request) => {
    received.push({ url: request.url, authorization: request.headers.get("authorization") });
    return simulated.fetch(request);
  };
  app = createApp({
    ...isolate,
    transport: fetchTransport(upstream),
    recordCall: async (record) => {
      records.push(record);
    },
  });
});
beforeEach(() => {
  received.length = 0;
});

async function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return app.fetch(
    new Request(`http://promptgate.test/promptgate/admin${path}`, {
      ...init,
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    }),
  );
}

async function chat(secret: string, options: { policy?: string; model?: string } = {}): Promise<Response> {
  const prefix = options.policy === undefined ? "" : `/policies/${options.policy}`;
  return app.fetch(
    new Request(`http://promptgate.test${prefix}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: options.model ?? "gpt-4.1", messages: [{ role: "user", content: "hello" }] }),
    }),
  );
}

async function refusal(response: Response): Promise<{ status: number; code: unknown; text: string }> {
  const text = await response.text();
  return { status: response.status, code: (JSON.parse(text) as { error: { code: unknown } }).error.code, text };
}

describe("named keys on Workers with D1", () => {
  it("makes a key, answers a call presenting it, and attributes the call to it", async () => {
    const created = await admin("/keys", {
      method: "POST",
      body: JSON.stringify({
        name: "edge-ci",
        team: "edge",
        policies: ["investigation.bounded"],
        models: ["gpt-4.1*"],
      }),
    });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: string; key: string };
    expect(key.key).toMatch(/^pg_/);
    const answer = await chat(key.key);
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    expect(received).toHaveLength(1);
    expect(received[0]?.authorization).toBe(`Bearer ${serverKey}`);
    const ref = answer.headers.get("x-promptgate-ref");
    const record = records.find((kept) => kept.ref === ref);
    expect(record?.key).toEqual({ id: key.id, name: "edge-ci", team: "edge" });
    expect(record?.policy).toMatch(/^investigation\.bounded@/);
    expect(JSON.stringify(records)).not.toContain(key.key);
    const listing = await (await admin("/keys")).text();
    expect(listing).toContain(key.id);
    expect(listing).not.toContain(key.key);
  });

  it("refuses another policy and a model outside the globs with 403, sending nothing", async () => {
    const created = await admin("/keys", {
      method: "POST",
      body: JSON.stringify({ name: "edge-bound", policies: ["investigation.bounded"], models: ["gpt-4.1*"] }),
    });
    const { key } = (await created.json()) as { key: string };
    expect(await refusal(await chat(key, { policy: "default" }))).toMatchObject({
      status: 403,
      code: "POLICY_NOT_ALLOWED",
    });
    expect(await refusal(await chat(key, { model: "gpt-5" }))).toMatchObject({
      status: 403,
      code: "MODEL_NOT_ALLOWED",
    });
    expect(received).toHaveLength(0);
  });

  it("refuses a revoked key with 401 authentication, within the isolate's one-second cache", async () => {
    const created = await admin("/keys", { method: "POST", body: JSON.stringify({ name: "edge-revoked" }) });
    const { id, key } = (await created.json()) as { id: string; key: string };
    expect((await chat(key)).status).toBe(200);
    const revoked = await admin(`/keys/${id}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as { revoked_at: string | null }).revoked_at).not.toBeNull();
    const start = Date.now();
    let response = await chat(key);
    while (response.status === 200 && Date.now() - start < 1_500) {
      await response.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 50));
      response = await chat(key);
    }
    const refused = await refusal(response);
    expect(refused).toMatchObject({ status: 401, code: "authentication" });
    expect(refused.text).not.toContain(key);
    expect(Date.now() - start).toBeLessThanOrEqual(1_500);
  });

  it("refuses a key revoked before its first use, and a request without a key, with 401", async () => {
    const created = await admin("/keys", { method: "POST", body: JSON.stringify({ name: "edge-unused" }) });
    const { id, key } = (await created.json()) as { id: string; key: string };
    expect((await admin(`/keys/${id}`, { method: "DELETE" })).status).toBe(200);
    expect(await refusal(await chat(key))).toMatchObject({ status: 401, code: "authentication" });
    expect(await refusal(await chat("sk-client-own-key"))).toMatchObject({ status: 401, code: "authentication" });
    expect(received).toHaveLength(0);
  });
});
