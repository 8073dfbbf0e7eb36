import { createServer, type OutgoingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { undiciTransport } from "../../src/runtime/node/undici-transport.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

/**
 * What must not leak between the client and the provider (issue 12): a redirect the client would
 * follow to another host, provider headers the gateway does not know, query parameters the
 * provider does not take, and request values the provider quotes back into the call record.
 */

const gatewayKey = "GWKEY-leaks-0123456789abcdef";
const serverKeys = {
  OPENAI_API_KEY: "sk-proj-LEAKSserverOpenAI0123456789",
  GEMINI_API_KEY: "AIzaLEAKSserverGemini0123456789ab",
  ANTHROPIC_API_KEY: "sk-ant-LEAKSserverAnthropic012345",
};
const adminKey = "leaks-admin-key";
const marker = "PROMPT-LEAK-MARKER-5ca1ab1e";
const secrets = [gatewayKey, ...Object.values(serverKeys)];

const passthroughPolicy = `name = "leaks.passthrough"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream_errors]
text = "passthrough"
`;

/** A second host, where a followed redirect would land. */
interface Elsewhere {
  origin: string;
  received: string[];
  server: Server;
}

async function startElsewhere(): Promise<Elsewhere> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    request.on("end", () => {
      received.push(`${request.method} ${request.url} ${JSON.stringify(request.headers)} ${body}`);
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

let harness: GatewayUnderTest;
let elsewhere: Elsewhere;

beforeAll(async () => {
  elsewhere = await startElsewhere();
  harness = await startGatewayUnderTest({
    PROMPTGATE_KEYS: gatewayKey,
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_POLICIES: copyPolicies({ "leaks.passthrough.toml": passthroughPolicy }),
    ...serverKeys,
  });
});
afterAll(async () => {
  await harness.close();
  elsewhere.server.closeAllConnections();
  await new Promise<void>((resolve) => elsewhere.server.close(() => resolve()));
});
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  elsewhere.received.length = 0;
});

const chat = { model: "gpt-test", messages: [{ role: "user" as const, content: `hello ${marker}` }] };
const message = {
  model: "claude-test",
  max_tokens: 16,
  messages: [{ role: "user" as const, content: `hello ${marker}` }],
};
const geminiPrompt = { model: "gemini-test", contents: `hello ${marker}` };

function openai(): OpenAI {
  return new OpenAI({ apiKey: gatewayKey, baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
}

function gemini(): GoogleGenAI {
  return new GoogleGenAI({ apiKey: gatewayKey, httpOptions: { baseUrl: `${harness.gateway.url}/gemini` } });
}

function anthropic(): Anthropic {
  return new Anthropic({ apiKey: gatewayKey, baseURL: `${harness.gateway.url}/anthropic`, maxRetries: 0 });
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

async function recordOf(ref: string | null | undefined): Promise<Record<string, unknown>> {
  const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  return (await response.json()) as Record<string, unknown>;
}

/** The fake upstream answers every request with `status`, `headers` and `body`. */
function upstreamAnswers(status: number, headers: OutgoingHttpHeaders, body: unknown): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(status, headers);
    response.end(typeof body === "string" ? body : JSON.stringify(body));
  });
}

describe("a redirect from the provider", () => {
  const redirect = () => ({ location: `${elsewhere.origin}/stolen`, "content-type": "text/plain" });

  it("gives the openai SDK a retryable 502 upstream error, and nothing reaches the other host", async () => {
    upstreamAnswers(307, redirect(), "moved");
    const error = await rejectionOf(openai().chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(502);
    expect(apiError.code).toBe("upstream");
    expect(apiError.headers?.get("location")).toBeNull();
    expect((apiError.error as { promptgate: { retryable: boolean } }).promptgate.retryable).toBe(true);
    expect(elsewhere.received).toEqual([]);
  });

  it("gives the Gemini SDK ApiError 502, and it re-posts neither the prompt nor the key elsewhere", async () => {
    upstreamAnswers(307, redirect(), "moved");
    const error = await rejectionOf(gemini().models.generateContent(geminiPrompt));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    expect(elsewhere.received).toEqual([]);
  });

  it("gives the Anthropic SDK a 502, and nothing reaches the other host", async () => {
    upstreamAnswers(308, redirect(), "moved");
    const error = await rejectionOf(anthropic().messages.create(message));
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect(elsewhere.received).toEqual([]);
  });

  it.each([301, 302, 303, 307, 308])(
    "is a %i the client never sees, with its target kept out of the record",
    async (status) => {
      upstreamAnswers(status, redirect(), "moved");
      const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${gatewayKey}` },
        body: JSON.stringify(chat),
        redirect: "manual",
      });
      expect(response.status).toBe(502);
      expect(response.headers.get("location")).toBeNull();
      const body = (await response.json()) as { error: { code: string; promptgate: { retryable: boolean } } };
      expect(body.error.code).toBe("upstream");
      expect(body.error.promptgate.retryable).toBe(true);
      const record = await recordOf(response.headers.get("x-promptgate-ref"));
      expect(record).toMatchObject({
        error: "upstream",
        upstream_status: status,
        upstream_error: { class: "upstream" },
      });
      expect(JSON.stringify(record)).not.toContain(elsewhere.origin);
    },
  );

  it("is refused on a proxied route too", async () => {
    upstreamAnswers(302, redirect(), "");
    const response = await fetch(`${harness.gateway.url}/gemini/v1beta/cachedContents?pageSize=1`, {
      headers: { "x-goog-api-key": gatewayKey },
      redirect: "manual",
    });
    expect(response.status).toBe(502);
    expect(response.headers.get("location")).toBeNull();
    expect(((await response.json()) as { error: { status: string } }).error.status).toBeDefined();
  });
});

describe("the transports", () => {
  let redirecting: Server;
  let origin: string;

  beforeAll(async () => {
    redirecting = createServer((_request, response) => {
      response.writeHead(307, { location: `${elsewhere.origin}/stolen` });
      response.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    redirecting.closeAllConnections();
    await new Promise<void>((resolve) => redirecting.close(() => resolve()));
  });

  const request = () => ({
    url: `${origin}/v1/chat/completions`,
    method: "POST",
    headers: { authorization: `Bearer ${serverKeys.OPENAI_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(chat),
    signal: undefined,
  });

  it.each([
    ["undici on Node", () => undiciTransport()],
    ["fetch on Workers", () => fetchTransport((upstream) => fetch(upstream))],
  ])("never follow a redirect: %s hands the 3xx back", async (_name, transport) => {
    const response = await transport()(request());
    await response.bytes();
    expect(response.status).toBe(307);
    expect(elsewhere.received).toEqual([]);
  });
});

/** Headers no client may see: a key echoed, cookies, a redirect target, a challenge, the provider's account. */
const canaryHeaders = {
  "x-canary": serverKeys.OPENAI_API_KEY,
  "x-canary-gemini": serverKeys.GEMINI_API_KEY,
  "set-cookie": `session=${serverKeys.ANTHROPIC_API_KEY}; Path=/`,
  location: "http://elsewhere.test/stolen",
  "www-authenticate": `Bearer realm="${serverKeys.OPENAI_API_KEY}"`,
  "openai-organization": "org-leaks-secret",
  "anthropic-organization-id": "org-leaks-secret",
  "x-promptgate-ref": "ref_0000000000000000",
  "x-promptgate-simulated": "true",
  "x-goog-api-key": serverKeys.GEMINI_API_KEY,
  "alt-svc": 'h3=":443"',
  server: "provider-internal/1.2",
};

function expectNoCanary(headers: Headers): void {
  for (const name of Object.keys(canaryHeaders)) {
    if (name !== "x-promptgate-ref") expect(headers.get(name), name).toBeNull();
  }
  expect(headers.get("x-promptgate-ref")).toMatch(/^ref_[0-9a-f]{16}$/);
  expect(headers.get("x-promptgate-ref")).not.toBe(canaryHeaders["x-promptgate-ref"]);
  const all = JSON.stringify([...headers]);
  for (const secret of secrets) expect(all).not.toContain(secret);
}

describe("the provider's response headers", () => {
  it("reach the openai SDK only as the surface's request id and rate limits", async () => {
    upstreamAnswers(
      200,
      {
        ...canaryHeaders,
        "content-type": "application/json",
        "x-request-id": "req_123",
        "x-ratelimit-remaining-requests": "99",
        "openai-processing-ms": "12",
      },
      {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "gpt-test",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      },
    );
    const { response } = await openai().chat.completions.create(chat).withResponse();
    expectNoCanary(response.headers);
    expect(response.headers.get("x-request-id")).toBe("req_123");
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("99");
    expect(response.headers.get("openai-processing-ms")).toBe("12");
  });

  it("reach the openai SDK's stream filtered too", async () => {
    const frame = {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "gpt-test",
      choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }],
    };
    upstreamAnswers(
      200,
      { ...canaryHeaders, "content-type": "text/event-stream", "x-request-id": "req_s" },
      `data: ${JSON.stringify(frame)}\n\ndata: [DONE]\n\n`,
    );
    const { data, response } = await openai()
      .chat.completions.create({ ...chat, stream: true })
      .withResponse();
    for await (const _chunk of data) {
      // drained
    }
    expectNoCanary(response.headers);
    expect(response.headers.get("x-request-id")).toBe("req_s");
  });

  it("reach the Anthropic SDK only as its request-id and rate limits", async () => {
    upstreamAnswers(
      200,
      {
        ...canaryHeaders,
        "content-type": "application/json",
        "request-id": "req_a",
        "anthropic-ratelimit-requests-remaining": "7",
        "x-request-id": "not-anthropic's",
      },
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    );
    const { response } = await anthropic().messages.create(message).withResponse();
    expectNoCanary(response.headers);
    expect(response.headers.get("request-id")).toBe("req_a");
    expect(response.headers.get("anthropic-ratelimit-requests-remaining")).toBe("7");
    expect(response.headers.get("x-request-id")).toBeNull();
  });

  it("reach the Gemini SDK only as its request id", async () => {
    upstreamAnswers(
      200,
      { ...canaryHeaders, "content-type": "application/json", "x-goog-request-id": "g-1" },
      { candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }] },
    );
    const answer = await gemini().models.generateContent(geminiPrompt);
    const headers = new Headers(answer.sdkHttpResponse?.headers);
    expectNoCanary(headers);
    expect(headers.get("x-goog-request-id")).toBe("g-1");
  });

  it("are filtered on a proxied route", async () => {
    upstreamAnswers(200, { ...canaryHeaders, "content-type": "application/json" }, { object: "list", data: [] });
    const { response } = await openai().models.list().withResponse();
    expectNoCanary(response.headers);
  });

  it("are filtered on a failure relayed under a pass-through policy, its retry information kept", async () => {
    upstreamAnswers(
      429,
      { ...canaryHeaders, "content-type": "application/json", "retry-after": "1", "x-ratelimit-reset-requests": "1s" },
      { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
    );
    const response = await fetch(`${harness.gateway.url}/policies/leaks.passthrough/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${gatewayKey}` },
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(429);
    expectNoCanary(response.headers);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("x-ratelimit-reset-requests")).toBe("1s");
  });
});

describe("the simulated provider's label", () => {
  it("reaches the client from the simulated provider, and from no real one (above)", async () => {
    const simulated = await startGatewayUnderTest({ PROMPTGATE_UPSTREAM_OPENAI: "simulated" });
    try {
      const client = new OpenAI({ apiKey: "none", baseURL: `${simulated.gateway.url}/openai/v1`, maxRetries: 0 });
      const { response } = await client.chat.completions.create(chat).withResponse();
      expect(response.headers.get("x-promptgate-simulated")).toBe("true");
    } finally {
      await simulated.close();
    }
  });
});

describe("the client's query string", () => {
  it("reaches the provider from the openai SDK without a key or any unknown parameter", async () => {
    await openai().chat.completions.create(chat, { query: { key: gatewayKey, api_key: gatewayKey, debug: "1" } });
    expect(harness.upstream.received.map((request) => request.url)).toEqual(["/openai/v1/chat/completions"]);
  });

  it("reaches the provider from the Anthropic SDK with beta only", async () => {
    // Older SDKs mark beta calls with `?beta=true`; this one takes it as an extra parameter.
    await anthropic().beta.messages.create(message, { query: { key: gatewayKey, api_key: gatewayKey, beta: "true" } });
    expect(harness.upstream.received.map((request) => request.url)).toEqual(["/anthropic/v1/messages?beta=true"]);
  });

  it("keeps the Gemini SDK's paging of a cache list", async () => {
    const pager = await gemini().caches.list({ config: { pageSize: 3 } });
    expect(pager.page).toBeDefined();
    expect(harness.upstream.received.map((request) => request.url)).toEqual([
      "/gemini/v1beta/cachedContents?pageSize=3",
    ]);
  });

  it("reaches Gemini without ?KEY= or ?key;=, which are not its key parameter", async () => {
    const response = await fetch(
      `${harness.gateway.url}/gemini/v1beta/models/gemini-test:generateContent?alt=json&KEY=${gatewayKey}&key;=${gatewayKey}`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": gatewayKey },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
      },
    );
    expect(response.status).toBe(200);
    expect(harness.upstream.received.map((request) => request.url)).toEqual([
      "/gemini/v1beta/models/gemini-test:generateContent?alt=json",
    ]);
  });
});

describe("the provider's error text in the call record", () => {
  const quoting = {
    openai: {
      error: {
        message: `Invalid value for 'messages[0].content': '${marker}' (key ${serverKeys.OPENAI_API_KEY}).`,
        type: "invalid_request_error",
        param: "messages[0].content",
        code: "invalid_value",
      },
    },
    gemini: {
      error: {
        code: 400,
        message: `Invalid value at 'contents[0].parts[0].text' (TYPE_STRING), "${marker}"`,
        status: "INVALID_ARGUMENT",
        details: [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ description: marker }] }],
      },
    },
    anthropic: {
      type: "error",
      error: { type: "invalid_request_error", message: `messages.0.content: unexpected "${marker}"` },
    },
  };

  function expectCleanRecord(record: Record<string, unknown>, kept: string): void {
    const text = JSON.stringify(record);
    expect(text).not.toContain(marker);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect((record.upstream_error as { text: string }).text).toContain(kept);
  }

  it("keeps OpenAI's type and code, not the quoted input (openai SDK)", async () => {
    upstreamAnswers(400, { "content-type": "application/json" }, quoting.openai);
    const error = await rejectionOf(openai().chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const ref = (error as InstanceType<typeof OpenAI.APIError>).headers?.get("x-promptgate-ref");
    expectCleanRecord(await recordOf(ref), "type=invalid_request_error code=invalid_value: Invalid value for");
  });

  it("keeps Gemini's status, not the quoted input or its details (Gemini SDK)", async () => {
    upstreamAnswers(400, { "content-type": "application/json" }, quoting.gemini);
    const client = new GoogleGenAI({
      apiKey: gatewayKey,
      httpOptions: { baseUrl: `${harness.gateway.url}/gemini`, headers: { "x-promptgate-case": "leaks-gemini" } },
    });
    const error = await rejectionOf(client.models.generateContent(geminiPrompt));
    expect(error).toBeInstanceOf(ApiError);
    const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls?case=leaks-gemini`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const { calls } = (await response.json()) as { calls: Array<Record<string, unknown>> };
    expect(calls).toHaveLength(1);
    expectCleanRecord(calls[0] ?? {}, "code=400 status=INVALID_ARGUMENT: Invalid value at");
  });

  it("keeps Anthropic's error type, not the quoted input (Anthropic SDK)", async () => {
    upstreamAnswers(400, { "content-type": "application/json" }, quoting.anthropic);
    const error = await rejectionOf(anthropic().messages.create(message));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const ref = (error as InstanceType<typeof Anthropic.APIError>).headers?.get("x-promptgate-ref");
    expectCleanRecord(await recordOf(ref), "type=invalid_request_error: messages.0.content: unexpected");
  });

  it("keeps a stream's error event without the quoted input", async () => {
    const event = {
      type: "error",
      error: { type: "overloaded_error", message: `Overloaded while reading '${marker}'` },
    };
    upstreamAnswers(200, { "content-type": "text/event-stream" }, `event: error\ndata: ${JSON.stringify(event)}\n\n`);
    const response = await fetch(`${harness.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": gatewayKey },
      body: JSON.stringify({ ...message, stream: true }),
    });
    await response.text();
    expectCleanRecord(await recordOf(response.headers.get("x-promptgate-ref")), "type=overloaded_error: Overloaded");
  });
});
