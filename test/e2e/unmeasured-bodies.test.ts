import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// Issue 52, item 3: two proxied routes forwarded their bodies unmeasured. A cache's PATCH may change only its expiry,
// and a response's cancel takes no body; anything else is refused in the surface's native shape, nothing sent, under
// the default policy (which counts unknown fields elsewhere) as under every other.

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

const received = () => harness.upstream.received.map((request) => `${request.method} ${request.url}`);

function gemini(): GoogleGenAI {
  return new GoogleGenAI({ apiKey: "client-key", httpOptions: { baseUrl: `${harness.gateway.url}/gemini` } });
}

function openai(): OpenAI {
  return new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
}

/** A cache created through the gateway, the fake upstream's record of it cleared. */
async function createCache(): Promise<string> {
  const cache = await gemini().caches.create({
    model: "gemini-test",
    config: { systemInstruction: "s".repeat(100), contents: "c".repeat(200), ttl: "60s" },
  });
  harness.upstream.received.length = 0;
  return cache.name ?? "";
}

/** A raw request to the gateway with `body` as written. */
function send(method: string, path: string, body: string): Promise<Response> {
  return fetch(`${harness.gateway.url}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-goog-api-key": "client-key", authorization: "Bearer sk-client" },
    body,
  });
}

describe("PATCH of a cached content", () => {
  it("still updates a cache's ttl through @google/genai, the body going upstream as written", async () => {
    const name = await createCache();
    const updated = await gemini().caches.update({ name, config: { ttl: "3600s" } });
    expect(updated.name).toBe(name);
    expect(received()).toEqual([`PATCH /gemini/v1beta/${name}`]);
    expect(harness.upstream.received[0]?.body).toBe('{"ttl":"3600s"}');
  });

  it("still updates a cache's expireTime through @google/genai", async () => {
    const name = await createCache();
    const expireTime = new Date(Date.now() + 3_600_000).toISOString();
    await gemini().caches.update({ name, config: { expireTime } });
    expect(JSON.parse(harness.upstream.received[0]?.body ?? "null")).toEqual({ expireTime });
  });

  for (const [field, value] of [
    ["contents", [{ role: "user", parts: [{ text: "more to read" }] }]],
    ["systemInstruction", { parts: [{ text: "new rules" }] }],
    ["system_instruction", { parts: [{ text: "new rules" }] }],
    ["tools", [{ functionDeclarations: [{ name: "lookup" }] }]],
    ["toolConfig", { functionCallingConfig: { mode: "ANY" } }],
    ["displayName", "renamed"],
    ["somethingNew", 1],
  ] as const) {
    it(`refuses a body with '${field}' as INVALID_REQUEST in Gemini's shape, naming it, sending nothing`, async () => {
      const name = await createCache();
      const response = await send("PATCH", `/gemini/v1beta/${name}`, JSON.stringify({ ttl: "60s", [field]: value }));
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({
        code: 400,
        status: "INVALID_ARGUMENT",
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "INVALID_REQUEST" }],
        promptgate: { code: "INVALID_REQUEST" },
      });
      expect(body.error.message).toContain(`'${field}'`);
      expect(received()).toEqual([]);
    });
  }

  for (const [what, text] of [
    ["a duplicate key", '{"ttl":"60s","ttl":"7200s"}'],
    ["JSON that is no object", '["ttl"]'],
    ["text that is no JSON", "ttl=60s"],
    ["a ttl that is no string", '{"ttl":60}'],
  ] as const) {
    it(`refuses ${what} as INVALID_REQUEST, sending nothing`, async () => {
      const name = await createCache();
      const response = await send("PATCH", `/gemini/v1beta/${name}`, text);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 400, promptgate: { code: "INVALID_REQUEST" } } });
      expect(received()).toEqual([]);
    });
  }
});

describe("POST /responses/{id}/cancel", () => {
  /** The fake upstream answers every request with a cancelled response of `id`. */
  function answerCancelled(id: string): void {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ id, object: "response", status: "cancelled", output: [], background: true }));
    });
  }

  it("still cancels a provider's response through the openai SDK", async () => {
    answerCancelled("resp_provider1");
    const cancelled = await openai().responses.cancel("resp_provider1");
    expect(cancelled.status).toBe("cancelled");
    expect(received()).toEqual(["POST /openai/v1/responses/resp_provider1/cancel"]);
  });

  it("forwards a cancel whose body is {}", async () => {
    answerCancelled("resp_provider2");
    const response = await send("POST", "/openai/v1/responses/resp_provider2/cancel", "{}");
    expect(response.status).toBe(200);
    expect(received()).toEqual(["POST /openai/v1/responses/resp_provider2/cancel"]);
  });

  it("refuses a cancel with a body as INVALID_REQUEST in OpenAI's shape, naming the field, sending nothing", async () => {
    const response = await send("POST", "/openai/v1/responses/resp_provider3/cancel", '{"input":"x"}');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "INVALID_REQUEST", param: "input" },
    });
    expect(received()).toEqual([]);
  });

  it("refuses the same body on the cancel of an answer job the gateway runs, which stays cancellable", async () => {
    const client = openai();
    const queued = await client.responses.create({ model: "gpt-test", input: "run me", background: true });
    const response = await send("POST", `/openai/v1/responses/${queued.id}/cancel`, '{"input":"x"}');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "INVALID_REQUEST", param: "input" } });
    const cancelled = await client.responses.cancel(queued.id);
    expect(["cancelled", "completed"]).toContain(cancelled.status);
  });
});
