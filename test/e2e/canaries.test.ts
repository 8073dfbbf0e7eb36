import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedRequest } from "../support/fake-upstream.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

/**
 * Canaries: a provider key, a gateway key and a prompt marker are sent through every failure path;
 * none of them may come back in a response body or header or be written to a log line, and no key
 * may reach a call record.
 */

const providerKeys = {
  OPENAI_API_KEY: "sk-proj-CANARYprovOpenAI7f3e9a1b2c",
  GEMINI_API_KEY: "AIzaCANARYprovGemini4d5e6f7a8b9c0",
  ANTHROPIC_API_KEY: "sk-ant-CANARYprovAnthropic1a2b3c4d",
};
const gatewayKey = "pg-CANARY-gateway-key-5e6f7a8b9c0d1e2f";
const marker = "PROMPT-CANARY-MARKER-b16b00b5c0ffee";
const adminKey = "canary-admin-key";

const keyCanaries = [...Object.values(providerKeys), gatewayKey];
const allCanaries = [...keyCanaries, marker];

/** The text every prompt carries: the marker and, as a user might paste them, both kinds of key. */
const promptText = `${marker} ${providerKeys.OPENAI_API_KEY} ${gatewayKey}`;

const shortPolicy = `name = "canary.short"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream]
deadline_seconds = 0.5
`;

let harness: GatewayUnderTest;
/** Every answer the gateway gave in this file: status, headers and body text. */
const seen: Array<{ what: string; ref: string | null; headers: string; body: string }> = [];

beforeAll(async () => {
  harness = await startGatewayUnderTest({
    PROMPTGATE_KEYS: gatewayKey,
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_MAX_BODY_BYTES: "60000",
    PROMPTGATE_POLICIES: copyPolicies({ "canary.short.toml": shortPolicy }),
    ...providerKeys,
  });
});
afterAll(() => harness.close());

type SurfaceName = "openai" | "gemini" | "anthropic";

interface Surface {
  name: SurfaceName;
  generate: string;
  stream: string;
  count?: string;
  body(text: string, extra?: Record<string, unknown>): Record<string, unknown>;
  auth(key: string): Record<string, string>;
  /** The provider's native error body, echoing what the provider received. */
  errorBody(status: number, echo: string): unknown;
  /** A provider error event inside a stream, echoing what the provider received. */
  streamError(echo: string): string;
  /** A first, harmless stream frame. */
  firstFrame: string;
}

const surfaces: Surface[] = [
  {
    name: "openai",
    generate: "/openai/v1/chat/completions",
    stream: "/openai/v1/chat/completions",
    body: (text, extra = {}) => ({ model: "gpt-test", messages: [{ role: "user", content: text }], ...extra }),
    auth: (key) => ({ authorization: `Bearer ${key}` }),
    errorBody: (status, echo) => ({
      error: {
        message: `Incorrect API key provided: ${echo}`,
        type: status === 429 ? "insufficient_quota" : "invalid_request_error",
        param: null,
        code: status === 429 ? "rate_limit_exceeded" : "invalid_api_key",
      },
    }),
    streamError: (echo) =>
      `data: ${JSON.stringify({ error: { message: echo, type: "server_error", code: null } })}\n\n`,
    firstFrame: `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "ok" } }] })}\n\n`,
  },
  {
    name: "gemini",
    generate: "/gemini/v1beta/models/gemini-test:generateContent",
    stream: "/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
    count: "/gemini/v1beta/models/gemini-test:countTokens",
    body: (text, extra = {}) => ({ contents: [{ role: "user", parts: [{ text }] }], ...extra }),
    auth: (key) => ({ "x-goog-api-key": key }),
    errorBody: (status, echo) => ({
      error: {
        code: status,
        message: `API key not valid: ${echo}`,
        status: status === 429 ? "RESOURCE_EXHAUSTED" : "INVALID_ARGUMENT",
        details: [
          { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", metadata: { echo } },
        ],
      },
    }),
    streamError: (echo) =>
      `data: ${JSON.stringify({ error: { code: 500, message: echo, status: "INTERNAL" } })}\r\n\r\n`,
    firstFrame: `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, index: 0 }] })}\r\n\r\n`,
  },
  {
    name: "anthropic",
    generate: "/anthropic/v1/messages",
    stream: "/anthropic/v1/messages",
    count: "/anthropic/v1/messages/count_tokens",
    body: (text, extra = {}) => ({
      model: "claude-test",
      max_tokens: 16,
      messages: [{ role: "user", content: text }],
      ...extra,
    }),
    auth: (key) => ({ "x-api-key": key }),
    errorBody: (status, echo) => ({
      type: "error",
      error: {
        type: status === 529 ? "overloaded_error" : "authentication_error",
        message: `invalid x-api-key ${echo}`,
      },
      request_id: "req_canary",
    }),
    streamError: (echo) =>
      `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: echo } })}\n\n`,
    firstFrame: `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`,
  },
];

/** What the provider received, key and prompt included, for it to echo back. */
function echoOf(request: ReceivedRequest): string {
  const key =
    request.headers["x-goog-api-key"] ?? request.headers["x-api-key"] ?? request.headers.authorization ?? "none";
  return `key=${String(key)} url=${request.url} body=${request.body.slice(0, 500)}`;
}

function answerWith(answer: (request: ReceivedRequest, response: ServerResponse) => void): void {
  harness.upstream.answerWith(answer);
}

/** Sends a request, keeps what came back for the final checks, and returns the status. */
async function send(
  what: string,
  path: string,
  init: { headers?: Record<string, string>; body?: BodyInit; method?: string },
): Promise<number> {
  const response = await fetch(`${harness.gateway.url}${path}`, {
    method: init.method ?? "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.body ?? null,
    signal: AbortSignal.timeout(5_000),
  });
  const body = await response.text();
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
  seen.push({ what, ref: response.headers.get("x-promptgate-ref"), headers, body });
  // Checked here too, so that the failing path is named.
  for (const canary of allCanaries) {
    expect(body, `${what}: body`).not.toContain(canary);
    expect(headers, `${what}: headers`).not.toContain(canary);
  }
  return response.status;
}

const failingStatuses = [400, 401, 403, 404, 408, 413, 422, 429, 500, 502, 503, 504, 529];

describe.each(surfaces)("canaries on the $name surface", (surface) => {
  const valid = () => JSON.stringify(surface.body(promptText));
  const withKey = surface.auth(gatewayKey);

  it("a wrong, a near-miss, a provider and a missing key", async () => {
    harness.upstream.answerWith(undefined);
    harness.upstream.received.length = 0;
    for (const key of [
      `${gatewayKey}x`,
      gatewayKey.slice(0, -1),
      providerKeys.OPENAI_API_KEY,
      providerKeys.GEMINI_API_KEY,
    ]) {
      expect(await send("wrong key", surface.generate, { headers: surface.auth(key), body: valid() })).toBe(401);
    }
    expect(await send("no key", surface.generate, { body: valid() })).toBe(401);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("an oversize body, a window rejection, invalid JSON and wrong field types", async () => {
    harness.upstream.received.length = 0;
    const oversize = JSON.stringify(surface.body(promptText.repeat(2_000)));
    expect(await send("oversize", surface.generate, { headers: withKey, body: oversize })).toBe(413);
    const overWindow = JSON.stringify(surface.body(promptText.repeat(500)));
    expect(
      await send("window", `/policies/investigation.bounded${surface.generate}`, {
        headers: withKey,
        body: overWindow,
      }),
    ).toBe(400);
    expect(await send("invalid JSON", surface.generate, { headers: withKey, body: valid().slice(0, -3) })).toBe(400);
    const wrongType = valid().replace(`"${promptText}"`, `{"text": 7, "x": "${promptText}"}`);
    expect(await send("wrong type", surface.generate, { headers: withKey, body: wrongType })).toBe(400);
    const withBadUtf8 = new Uint8Array([...new TextEncoder().encode(valid().slice(0, -5)), 0xff, 0x22, 0x7d]);
    expect(await send("bad UTF-8", surface.generate, { headers: withKey, body: withBadUtf8 })).toBe(400);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("each upstream error class, the provider echoing the key and the prompt", async () => {
    for (const status of failingStatuses) {
      answerWith((request, response) => {
        response.writeHead(status, { "content-type": "application/json", "x-echo-len": String(request.body.length) });
        response.end(JSON.stringify(surface.errorBody(status, echoOf(request))));
      });
      const answered = await send(`upstream ${status}`, surface.generate, { headers: withKey, body: valid() });
      expect(answered).toBeGreaterThanOrEqual(400);
      if (surface.count) await send(`count ${status}`, surface.count, { headers: withKey, body: valid() });
    }
    answerWith((request, response) => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end(`plain text failure: ${echoOf(request)}`);
    });
    expect(await send("plain-text 500", surface.generate, { headers: withKey, body: valid() })).toBe(502);
    answerWith((request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(`{"not json": "${echoOf(request)}`);
    });
    expect(await send("malformed 200", surface.generate, { headers: withKey, body: valid() })).toBe(502);
    answerWith((_request, response) => response.socket?.destroy());
    expect(await send("reset", surface.generate, { headers: withKey, body: valid() })).toBe(502);
    answerWith(() => undefined);
    expect(
      await send("timeout", `/policies/canary.short${surface.generate}`, { headers: withKey, body: valid() }),
    ).toBe(504);
  });

  it("streamed errors: a provider error event echoing the key and prompt, and a cut stream", async () => {
    const streamBody = JSON.stringify(surface.body(promptText, surface.name === "gemini" ? {} : { stream: true }));
    answerWith((request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(surface.firstFrame);
      response.end(surface.streamError(echoOf(request)));
    });
    expect(await send("stream error event", surface.stream, { headers: withKey, body: streamBody })).toBe(200);
    answerWith((request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(surface.firstFrame);
      response.write(`data: {"partial": "${echoOf(request).slice(0, 100)}`);
      setTimeout(() => response.socket?.destroy(), 10);
    });
    expect(await send("cut stream", surface.stream, { headers: withKey, body: streamBody })).toBe(200);
    answerWith((request, response) => {
      response.writeHead(429, { "content-type": "application/json" });
      response.end(JSON.stringify(surface.errorBody(429, echoOf(request))));
    });
    expect(await send("stream refused", surface.stream, { headers: withKey, body: streamBody })).toBeGreaterThanOrEqual(
      400,
    );
  });
});

describe("canaries on surface-specific paths", () => {
  it("Gemini's ?key=, right and wrong, through a failure", async () => {
    const path = "/gemini/v1beta/models/gemini-test:generateContent";
    const body = JSON.stringify(surfaces[1]!.body(promptText));
    answerWith((request, response) => {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify(surfaces[1]!.errorBody(400, echoOf(request))));
    });
    expect(await send("?key= right", `${path}?key=${gatewayKey}&alt=json`, { body })).toBe(401);
    expect(harness.upstream.received.at(-1)?.url).not.toContain(gatewayKey);
    expect(await send("?key= wrong", `${path}?key=${gatewayKey}z`, { body })).toBe(401);
    expect(await send("?key= provider", `${path}?key=${providerKeys.GEMINI_API_KEY}`, { body })).toBe(401);
    expect(await send("?key= bad JSON", `${path}?key=${gatewayKey}`, { body: body.slice(0, 9) })).toBe(400);
    const streamPath = `/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=${gatewayKey}`;
    answerWith((request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(surfaces[1]!.streamError(echoOf(request)));
    });
    expect(await send("?key= stream", streamPath, { body })).toBe(200);
  });

  it("a proxied route's failure echoing the key", async () => {
    answerWith((request, response) => {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify(surfaces[0]!.errorBody(401, echoOf(request))));
    });
    expect(
      await send("proxied", "/openai/v1/models", { method: "GET", headers: { authorization: `Bearer ${gatewayKey}` } }),
    ).toBe(401);
    expect(
      await send("proxied wrong key", "/openai/v1/models", {
        method: "GET",
        headers: { authorization: `Bearer ${gatewayKey}q` },
      }),
    ).toBe(401);
  });

  it("a schema-invalid answer whose value and property names carry the canaries", async () => {
    answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          model: "gpt-test",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: JSON.stringify({ n: `${marker} ${providerKeys.OPENAI_API_KEY}`, [marker]: gatewayKey }),
              },
              finish_reason: "stop",
            },
          ],
        }),
      );
    });
    const body = JSON.stringify({
      ...surfaces[0]!.body(promptText),
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "answer",
          strict: true,
          schema: {
            type: "object",
            properties: { n: { type: "integer" } },
            required: ["n"],
            additionalProperties: false,
          },
        },
      },
    });
    expect(
      await send("schema-invalid answer", "/policies/investigation.bounded/openai/v1/chat/completions", {
        headers: { authorization: `Bearer ${gatewayKey}` },
        body,
      }),
    ).toBe(422);
  });

  it("an admin route with a wrong admin key", async () => {
    expect(
      await send("admin wrong key", "/promptgate/admin/calls?case=x", {
        method: "GET",
        headers: { authorization: `Bearer ${gatewayKey}` },
      }),
    ).toBe(401);
  });
});

describe("after every path", () => {
  it("no canary appears in any response body or header", () => {
    expect(seen.length).toBeGreaterThan(100);
    for (const answer of seen) {
      for (const canary of allCanaries) {
        expect(answer.body, answer.what).not.toContain(canary);
        expect(answer.headers, answer.what).not.toContain(canary);
      }
    }
  });

  it("no canary appears in any captured log line", () => {
    expect(harness.logs.length).toBeGreaterThan(50);
    for (const line of harness.logs) for (const canary of allCanaries) expect(line).not.toContain(canary);
  });

  it("no key appears in any call record", async () => {
    const refs = [...new Set(seen.map((answer) => answer.ref).filter((ref): ref is string => ref !== null))];
    let records = 0;
    for (const ref of refs) {
      const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
        headers: { authorization: `Bearer ${adminKey}` },
        signal: AbortSignal.timeout(5_000),
      });
      if (response.status !== 200) continue;
      records++;
      const text = await response.text();
      for (const key of keyCanaries) expect(text, `record ${ref}`).not.toContain(key);
    }
    // Upstream failures at least are recorded, with the provider's (redacted) text.
    expect(records).toBeGreaterThan(40);
  });
});
