import { describe, expect, it } from "vitest";
import { appUnderTest } from "../support/app-under-test.js";

// The bodies of two proxied routes, which go upstream unmeasured (issue 52, item 3), on Node and in workerd (test/http
// runs in both; test/e2e/unmeasured-bodies.test.ts shows the same through the SDKs): a cache's PATCH takes only its new
// expiry, a response's cancel no body at all; anything else is refused in the surface's native shape, nothing sent.

const cachePath = "/gemini/v1beta/cachedContents/abc123";
const cancelPath = "/openai/v1/responses/resp_abc123/cancel";

/** The app in pass-through, its providers a fetch that keeps what reached it and answers as the route's provider would. */
async function gateway(environment: Record<string, string> = {}) {
  const sent: string[] = [];
  const { app } = await appUnderTest(
    { GEMINI_API_KEY: "server-key", OPENAI_API_KEY: "server-key", ...environment },
    undefined,
    async (request) => {
      const url = new URL(request.url);
      sent.push(`${request.method} ${url.pathname}${url.search} ${await request.text()}`);
      const cancelled = { id: "resp_abc123", object: "response", status: "cancelled", output: [] };
      const cache = { name: "cachedContents/abc123", expireTime: "2030-01-01T00:00:00Z" };
      return Response.json(request.url.includes("/cancel") ? cancelled : cache);
    },
  );
  const send = (method: string, path: string, body?: string) =>
    app.request(path, { method, headers: { "content-type": "application/json" }, body });
  return { send, sent };
}

describe("PATCH of a cached content", () => {
  it("forwards a new ttl or expireTime as written", async () => {
    const { send, sent } = await gateway();
    expect((await send("PATCH", cachePath, '{"ttl":"3600s"}')).status).toBe(200);
    expect(
      (await send("PATCH", `${cachePath}?updateMask=expireTime`, '{"expire_time":"2030-01-01T00:00:00Z"}')).status,
    ).toBe(200);
    expect(sent).toEqual([
      `PATCH /v1beta/cachedContents/abc123 {"ttl":"3600s"}`,
      `PATCH /v1beta/cachedContents/abc123?updateMask=expireTime {"expire_time":"2030-01-01T00:00:00Z"}`,
    ]);
  });

  for (const [field, body] of [
    ["contents", { ttl: "60s", contents: [{ role: "user", parts: [{ text: "more" }] }] }],
    ["systemInstruction", { systemInstruction: { parts: [{ text: "new rules" }] } }],
    ["tools", { tools: [{ functionDeclarations: [{ name: "lookup" }] }] }],
    ["toolConfig", { toolConfig: { functionCallingConfig: { mode: "ANY" } } }],
    ["unknown", { ttl: "60s", unknown: null }],
  ] as const) {
    it(`refuses '${field}' in Gemini's native shape, naming it, sending nothing`, async () => {
      const { send, sent } = await gateway();
      const response = await send("PATCH", cachePath, JSON.stringify(body));
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: { message: string } };
      expect(error).toMatchObject({
        code: 400,
        status: "INVALID_ARGUMENT",
        details: [{ reason: "INVALID_REQUEST", domain: "promptgate" }],
      });
      expect(error.message).toContain(`'${field}'`);
      expect(sent).toEqual([]);
    });
  }

  it("refuses ttl and expire_time spelled twice, a duplicate key and JSON that is no object, sending nothing", async () => {
    const { send, sent } = await gateway();
    for (const body of [
      '{"expireTime":"2030-01-01T00:00:00Z","expire_time":"2031-01-01T00:00:00Z"}',
      '{"ttl":"1s","ttl":"2s"}',
      "null",
      "[]",
    ]) {
      const response = await send("PATCH", cachePath, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { details: [{ reason: "INVALID_REQUEST" }] } });
    }
    expect(sent).toEqual([]);
  });

  it("refuses a body over the gateway's cap while reading it, sending nothing", async () => {
    const { send, sent } = await gateway({ PROMPTGATE_MAX_BODY_BYTES: "64" });
    const response = await send("PATCH", cachePath, JSON.stringify({ ttl: "60s", contents: "x".repeat(100) }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { details: [{ reason: "PAYLOAD_TOO_LARGE" }] } });
    expect(sent).toEqual([]);
  });
});

describe("POST /responses/{id}/cancel", () => {
  it("forwards a cancel without a body, or with {}", async () => {
    const { send, sent } = await gateway();
    expect((await send("POST", cancelPath)).status).toBe(200);
    expect((await send("POST", cancelPath, "{}")).status).toBe(200);
    const upstreamPath = "/v1/responses/resp_abc123/cancel";
    expect(sent).toEqual([`POST ${upstreamPath} `, `POST ${upstreamPath} {}`]);
  });

  it("refuses a cancel with a body in OpenAI's native shape, naming the field, sending nothing", async () => {
    const { send, sent } = await gateway();
    const response = await send("POST", cancelPath, '{"input":"x"}');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "INVALID_REQUEST", param: "input" },
    });
    expect(sent).toEqual([]);
  });

  it("refuses a cancel whose body is no JSON object, sending nothing", async () => {
    const { send, sent } = await gateway();
    for (const body of ["[]", '"x"', "{", '{"a":1,"a":1}']) {
      const response = await send("POST", cancelPath, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    }
    expect(sent).toEqual([]);
  });
});
