import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { createIsolateDeps } from "../../src/runtime/workers/worker-deps.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";

// Limits over time inside workerd (contract section 10): a named key's requests_per_minute, admitted against the
// counters in D1, on each surface; the third call of a minute is refused in the surface's native shape before
// anything is sent. The isolate's own dependencies (D1 store, bundled policies), its clock fixed by the test, the
// simulated providers as the upstream behind a recorder of what reached them.

const adminKey = "admin-test-key";
const upstreamOrigin = "http://upstream.promptgate.invalid";
/** 2026-12-08T09:30:10Z: ten seconds into a UTC minute, so that its windows end 50 s later. */
const clockMs = Date.parse("2026-12-08T09:30:10.000Z");

let app: ReturnType<typeof createApp>;
const received: string[] = [];

beforeAll(async () => {
  const isolate = await createIsolateDeps({
    ...env,
    PROMPTGATE_KEY_MODE: "keys",
    PROMPTGATE_OPEN_RELAY: "false",
    OPENAI_API_KEY: "sk-edge-limits-openai",
    ANTHROPIC_API_KEY: "sk-ant-edge-limits",
    PROMPTGATE_UPSTREAM_OPENAI: `${upstreamOrigin}/openai/v1`,
    PROMPTGATE_UPSTREAM_GEMINI: `${upstreamOrigin}/gemini`,
    PROMPTGATE_UPSTREAM_ANTHROPIC: `${upstreamOrigin}/anthropic`,
  });
  const simulated = createSimulatedProvider();
  app = createApp({
    ...isolate,
    now: () => new Date(clockMs),
    transport: fetchTransport(async (request: Request) => {
      received.push(new URL(request.url).pathname);
      return simulated.fetch(request);
    }),
    recordCall: async () => {},
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

interface EdgeSurface {
  name: "openai" | "anthropic" | "gemini";
  call(secret: string): Promise<Response>;
  /** The native error body's `promptgate` member, after checking the shape around it. */
  promptgateOf(body: unknown, response: Response, code: string): Record<string, unknown>;
}

async function post(path: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  return app.fetch(
    new Request(`http://promptgate.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
  );
}

const surfaces: EdgeSurface[] = [
  {
    name: "openai",
    call: (secret) =>
      post(
        "/openai/v1/chat/completions",
        { authorization: `Bearer ${secret}` },
        { model: "gpt-4.1-mini", messages: [{ role: "user", content: "hello" }] },
      ),
    promptgateOf(body, response, code) {
      const error = (body as { error: Record<string, unknown> }).error;
      expect(error).toMatchObject({ message: expect.any(String), type: expect.any(String), code });
      expect(error).toHaveProperty("param");
      expect(response.headers.get("x-request-id")).toBe(response.headers.get("x-promptgate-ref"));
      return error.promptgate as Record<string, unknown>;
    },
  },
  {
    name: "anthropic",
    call: (secret) =>
      post(
        "/anthropic/v1/messages",
        { "x-api-key": secret, "anthropic-version": "2023-06-01" },
        { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hello" }] },
      ),
    promptgateOf(body, response, code) {
      const native = body as { type: string; error: Record<string, unknown>; request_id: string };
      expect(native.type).toBe("error");
      expect(native.error).toMatchObject({ type: expect.any(String), message: expect.any(String), code });
      expect(native.request_id).toBe(response.headers.get("x-promptgate-ref"));
      return native.error.promptgate as Record<string, unknown>;
    },
  },
  {
    name: "gemini",
    call: (secret) =>
      post(
        "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
        { "x-goog-api-key": secret },
        { contents: [{ role: "user", parts: [{ text: "hello" }] }] },
      ),
    promptgateOf(body, response, code) {
      const error = (body as { error: Record<string, unknown> }).error;
      expect(error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED", message: expect.any(String) });
      expect(error.details).toContainEqual(
        expect.objectContaining({ "@type": expect.stringContaining("ErrorInfo"), reason: code }),
      );
      expect(response.status).toBe(429);
      return error.promptgate as Record<string, unknown>;
    },
  },
];

describe.each(surfaces)("a key's requests_per_minute = 2 on Workers with D1 ($name)", (surface) => {
  it("admits two calls, refuses the third 429 RATE_LIMITED in the native shape sending nothing, and keeps the counter in D1", async () => {
    const created = await admin("/keys", {
      method: "POST",
      body: JSON.stringify({ name: `edge-limits-${surface.name}`, limits: { requests_per_minute: 2 } }),
    });
    const createdText = await created.text();
    expect(created.status, createdText).toBe(201);
    const { id, key } = JSON.parse(createdText) as { id: string; key: string };

    for (const remaining of ["1", "0"]) {
      const answer = await surface.call(key);
      const text = await answer.text();
      expect(answer.status, text).toBe(200);
      expect(answer.headers.get("x-ratelimit-limit-requests")).toBe("2");
      expect(answer.headers.get("x-ratelimit-remaining-requests")).toBe(remaining);
      expect(answer.headers.get("x-ratelimit-reset-requests")).toBe("50s");
    }
    expect(received).toHaveLength(2);

    const refused = await surface.call(key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    expect(refused.headers.get("retry-after")).toBe("50");
    expect(refused.headers.get("x-should-retry")).not.toBe("false");
    const promptgate = surface.promptgateOf(await refused.json(), refused, "RATE_LIMITED");
    expect(promptgate).toMatchObject({
      code: "RATE_LIMITED",
      retryable: true,
      ref: refused.headers.get("x-promptgate-ref"),
      limit: { window: "requests_per_minute", limit: 2, used: 2, retry_after_seconds: 50 },
    });
    expect(received).toHaveLength(2);

    // The counter is a row of D1's limit_counters: the key's scope, the UTC minute's bucket, the two admitted calls.
    const { results } = await env.DB.prepare("SELECT scope, name, bucket, used FROM limit_counters WHERE scope = ?")
      .bind(`key:${id}`)
      .all();
    expect(results).toEqual([
      { scope: `key:${id}`, name: "requests_per_minute", bucket: Math.floor(clockMs / 60_000), used: 2 },
    ]);
    const windows = await admin(`/keys/${id}/limits`);
    expect(windows.status).toBe(200);
    expect(await windows.json()).toEqual({
      windows: [
        { window: "requests_per_minute", limit: 2, used: 2, reset_at: new Date(clockMs + 50_000).toISOString() },
      ],
    });
  });
});
