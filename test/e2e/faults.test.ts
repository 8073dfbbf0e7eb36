import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicBodies, geminiBodies, openaiBodies } from "../errors/provider-error-bodies.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

/**
 * Fault injection through the real SDKs: each provider's real error bodies, reset connections, a
 * hanging provider (one-second policy deadline), malformed JSON under 200 and streams cut
 * mid-event. Each surface must give the SDK the right class, status, retryable flag and native
 * shape, never the provider's own text, and the gateway must keep serving afterwards.
 */

const faultPolicy = `name = "faults.short"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream]
deadline_seconds = 1
`;

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({
    PROMPTGATE_POLICIES: copyPolicies({ "faults.short.toml": faultPolicy }),
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

const base = () => `${harness.gateway.url}/policies/faults.short`;
const refPattern = /^ref_[0-9a-f]{16}$/;

function openai(): OpenAI {
  return new OpenAI({ apiKey: "sk-client", baseURL: `${base()}/openai/v1`, maxRetries: 0 });
}
function gemini(): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: "client-key",
    httpOptions: { baseUrl: `${base()}/gemini`, retryOptions: { attempts: 1 } },
  });
}
function anthropic(): Anthropic {
  return new Anthropic({ apiKey: "client-key", baseURL: `${base()}/anthropic`, maxRetries: 0 });
}

const chat = { model: "gpt-test", messages: [{ role: "user" as const, content: "hello" }] };
const message = { model: "claude-test", max_tokens: 16, messages: [{ role: "user" as const, content: "hello" }] };

/** A bounded wait: fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return within(
    promise.then(
      () => {
        throw new Error("expected the call to fail");
      },
      (error: unknown) => error,
    ),
    5_000,
    "the call to fail",
  );
}

/** One injected fault: how the fake upstream answers. */
type Fault = (response: ServerResponse) => void;

function answering(status: number, body: unknown, headers: Record<string, string> = {}): Fault {
  return (response) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(typeof body === "string" ? body : JSON.stringify(body));
  };
}
const reset: Fault = (response) => response.socket?.destroy();
const hang: Fault = () => undefined;
const malformed = answering(200, '{"id": "x", "choices": [{"message": ');

function inject(fault: Fault): void {
  harness.upstream.answerWith((_request, response) => fault(response));
}

/** What the client must see for a fault. */
interface Expected {
  status: number;
  code: string;
  retryable: boolean;
  /** The surface's native error type (OpenAI `type`, Anthropic `error.type`, Gemini `status`). */
  nativeType: string;
  /** Headers the answer must carry, e.g. the provider's retry information. */
  headers?: Record<string, string>;
}

interface FaultCase {
  name: string;
  fault: Fault;
  expected: Expected;
  /** Text of the provider's own answer that must not reach the client. */
  raw?: string;
}

const rawOf = (body: { error: { message: string } }) => body.error.message.slice(0, 30);

const openaiCases: FaultCase[] = [
  {
    name: "429 rate_limit_exceeded with retry-after-ms",
    fault: answering(429, openaiBodies.rateLimitExceeded, { "retry-after-ms": "1500" }),
    expected: {
      status: 429,
      code: "rate_limit",
      retryable: true,
      nativeType: "rate_limit_error",
      headers: { "retry-after-ms": "1500" },
    },
    raw: rawOf(openaiBodies.rateLimitExceeded),
  },
  {
    name: "429 insufficient_quota",
    fault: answering(429, openaiBodies.insufficientQuota),
    expected: { status: 429, code: "quota", retryable: false, nativeType: "insufficient_quota" },
    raw: rawOf(openaiBodies.insufficientQuota),
  },
  {
    name: "400 context_length_exceeded",
    fault: answering(400, openaiBodies.contextLengthExceeded),
    expected: { status: 400, code: "INVALID_REQUEST", retryable: false, nativeType: "invalid_request_error" },
    raw: rawOf(openaiBodies.contextLengthExceeded),
  },
  {
    name: "401 invalid_api_key",
    fault: answering(401, openaiBodies.invalidApiKey),
    expected: { status: 401, code: "authentication", retryable: false, nativeType: "authentication_error" },
    raw: rawOf(openaiBodies.invalidApiKey),
  },
  {
    name: "404 model_not_found",
    fault: answering(404, openaiBodies.modelNotFound),
    expected: { status: 404, code: "model", retryable: false, nativeType: "invalid_request_error" },
    raw: rawOf(openaiBodies.modelNotFound),
  },
  {
    name: "500 server_error",
    fault: answering(500, openaiBodies.serverError),
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "server_error" },
    raw: rawOf(openaiBodies.serverError),
  },
  {
    name: "503 engine overloaded",
    fault: answering(503, openaiBodies.engineOverloaded),
    expected: { status: 503, code: "worker", retryable: true, nativeType: "server_error" },
    raw: rawOf(openaiBodies.engineOverloaded),
  },
  {
    name: "529 overloaded",
    fault: answering(529, openaiBodies.engineOverloaded),
    expected: { status: 529, code: "worker", retryable: true, nativeType: "server_error" },
  },
  {
    name: "a reset connection",
    fault: reset,
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "server_error" },
  },
  {
    name: "malformed JSON under 200",
    fault: malformed,
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "server_error" },
  },
  {
    name: "a provider that hangs past the deadline",
    fault: hang,
    expected: { status: 504, code: "timeout", retryable: true, nativeType: "server_error" },
  },
];

const geminiCases: FaultCase[] = [
  {
    name: "429 RESOURCE_EXHAUSTED per minute with RetryInfo",
    fault: answering(429, geminiBodies.perMinuteWithRetryInfo),
    expected: {
      status: 429,
      code: "rate_limit",
      retryable: true,
      nativeType: "RESOURCE_EXHAUSTED",
      headers: { "retry-after": "35" },
    },
    raw: rawOf(geminiBodies.perMinuteWithRetryInfo),
  },
  {
    name: "429 RESOURCE_EXHAUSTED per day",
    fault: answering(429, geminiBodies.perDay),
    expected: { status: 429, code: "quota", retryable: false, nativeType: "RESOURCE_EXHAUSTED" },
    raw: rawOf(geminiBodies.perDay),
  },
  {
    name: "400 INVALID_ARGUMENT schema error",
    fault: answering(400, geminiBodies.invalidArgument),
    expected: { status: 400, code: "INVALID_REQUEST", retryable: false, nativeType: "INVALID_ARGUMENT" },
    raw: "GenerateContentRequest.generation_config",
  },
  {
    name: "400 API_KEY_INVALID",
    fault: answering(400, geminiBodies.apiKeyInvalid),
    expected: { status: 401, code: "authentication", retryable: false, nativeType: "UNAUTHENTICATED" },
    raw: rawOf(geminiBodies.apiKeyInvalid),
  },
  {
    name: "401 UNAUTHENTICATED",
    fault: answering(401, {
      error: { code: 401, message: "Request had invalid authentication credentials.", status: "UNAUTHENTICATED" },
    }),
    expected: { status: 401, code: "authentication", retryable: false, nativeType: "UNAUTHENTICATED" },
    raw: "Request had invalid authentication",
  },
  {
    name: "404 model NOT_FOUND",
    fault: answering(404, geminiBodies.modelNotFound),
    expected: { status: 404, code: "model", retryable: false, nativeType: "NOT_FOUND" },
    raw: rawOf(geminiBodies.modelNotFound),
  },
  {
    name: "500 INTERNAL",
    fault: answering(500, geminiBodies.internal),
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "UNAVAILABLE" },
    raw: rawOf(geminiBodies.internal),
  },
  {
    name: "503 UNAVAILABLE overloaded",
    fault: answering(503, geminiBodies.overloaded),
    expected: { status: 503, code: "worker", retryable: true, nativeType: "UNAVAILABLE" },
    raw: rawOf(geminiBodies.overloaded),
  },
  {
    name: "529",
    fault: answering(529, geminiBodies.overloaded),
    expected: { status: 529, code: "worker", retryable: true, nativeType: "UNAVAILABLE" },
  },
  {
    name: "a reset connection",
    fault: reset,
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "UNAVAILABLE" },
  },
  {
    name: "malformed JSON under 200",
    fault: malformed,
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "UNAVAILABLE" },
  },
  {
    name: "a provider that hangs past the deadline",
    fault: hang,
    expected: { status: 504, code: "timeout", retryable: true, nativeType: "DEADLINE_EXCEEDED" },
  },
];

const anthropicCases: FaultCase[] = [
  {
    name: "429 rate_limit_error with retry-after",
    fault: answering(429, anthropicBodies.rateLimit, { "retry-after": "7" }),
    expected: {
      status: 429,
      code: "rate_limit",
      retryable: true,
      nativeType: "rate_limit_error",
      headers: { "retry-after": "7" },
    },
    raw: rawOf(anthropicBodies.rateLimit),
  },
  {
    name: "400 invalid_request_error (prompt too long)",
    fault: answering(400, anthropicBodies.promptTooLong),
    expected: { status: 400, code: "INVALID_REQUEST", retryable: false, nativeType: "invalid_request_error" },
    raw: rawOf(anthropicBodies.promptTooLong),
  },
  {
    name: "401 authentication_error",
    fault: answering(401, anthropicBodies.authentication),
    expected: { status: 401, code: "authentication", retryable: false, nativeType: "authentication_error" },
    raw: rawOf(anthropicBodies.authentication),
  },
  {
    name: "404 not_found_error for the model",
    fault: answering(404, anthropicBodies.modelNotFound),
    expected: { status: 404, code: "model", retryable: false, nativeType: "not_found_error" },
    raw: rawOf(anthropicBodies.modelNotFound),
  },
  {
    name: "500 api_error",
    fault: answering(500, anthropicBodies.apiError),
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "api_error" },
    raw: rawOf(anthropicBodies.apiError),
  },
  {
    name: "503 overloaded",
    fault: answering(503, anthropicBodies.overloaded),
    expected: { status: 503, code: "worker", retryable: true, nativeType: "overloaded_error" },
  },
  {
    name: "529 overloaded_error",
    fault: answering(529, anthropicBodies.overloaded),
    expected: { status: 529, code: "worker", retryable: true, nativeType: "overloaded_error" },
  },
  {
    name: "a reset connection",
    fault: reset,
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "api_error" },
  },
  {
    name: "malformed JSON under 200",
    fault: malformed,
    expected: { status: 502, code: "upstream", retryable: true, nativeType: "api_error" },
  },
  {
    name: "a provider that hangs past the deadline",
    fault: hang,
    expected: { status: 504, code: "timeout", retryable: true, nativeType: "timeout_error" },
  },
];

function expectHeaders(headers: Headers | undefined, expected: Expected): void {
  expect(headers?.get("x-promptgate-ref")).toMatch(refPattern);
  if (expected.retryable) expect(headers?.get("x-should-retry")).not.toBe("false");
  else expect(headers?.get("x-should-retry")).toBe("false");
  for (const [name, value] of Object.entries(expected.headers ?? {})) expect(headers?.get(name)).toBe(value);
}

describe("the openai SDK against a faulty provider", () => {
  it.each(openaiCases)("$name", async ({ fault, expected, raw }) => {
    inject(fault);
    const error = await rejectionOf(openai().chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const failure = error as InstanceType<typeof OpenAI.APIError>;
    const classes: Record<number, unknown> = {
      400: OpenAI.BadRequestError,
      401: OpenAI.AuthenticationError,
      404: OpenAI.NotFoundError,
      429: OpenAI.RateLimitError,
    };
    expect(failure).toBeInstanceOf(classes[expected.status] ?? OpenAI.InternalServerError);
    expect(failure.status).toBe(expected.status);
    expect(failure.code).toBe(expected.code);
    expect(failure.type).toBe(expected.nativeType);
    expect(failure.error).toMatchObject({
      message: expect.any(String),
      type: expected.nativeType,
      param: null,
      code: expected.code,
      promptgate: { code: expected.code, retryable: expected.retryable, ref: failure.headers?.get("x-promptgate-ref") },
    });
    expectHeaders(failure.headers, expected);
    if (raw !== undefined) expect(JSON.stringify(failure.error)).not.toContain(raw);
    expect(harness.upstream.received).toHaveLength(1);
  });
});

describe("the Gemini SDK against a faulty provider", () => {
  it.each(geminiCases)("$name", async ({ fault, expected, raw }) => {
    inject(fault);
    const error = await rejectionOf(gemini().models.generateContent({ model: "gemini-test", contents: "hi" }));
    expect(error).toBeInstanceOf(ApiError);
    const failure = error as ApiError;
    expect(failure.status).toBe(expected.status);
    const body = JSON.parse(failure.message) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      code: expected.status,
      status: expected.nativeType,
      message: expect.any(String),
      details: expect.arrayContaining([
        expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: expected.code }),
      ]),
      promptgate: { code: expected.code, retryable: expected.retryable, ref: expect.stringMatching(refPattern) },
    });
    if (raw !== undefined) expect(failure.message).not.toContain(raw);
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("passes Gemini's RetryInfo on as RetryInfo and retry-after headers", async () => {
    inject(answering(429, geminiBodies.perMinuteWithRetryInfo));
    const response = await fetch(`${base()}/gemini/v1beta/models/gemini-test:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "client-key" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      signal: AbortSignal.timeout(5_000),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after-ms")).toBe("34400");
    const body = (await response.json()) as { error: { details: Array<Record<string, unknown>> } };
    expect(body.error.details).toContainEqual({
      "@type": "type.googleapis.com/google.rpc.RetryInfo",
      retryDelay: "34.4s",
    });
  });
});

describe("the Anthropic SDK against a faulty provider", () => {
  it.each(anthropicCases)("$name", async ({ fault, expected, raw }) => {
    inject(fault);
    const error = await rejectionOf(anthropic().messages.create(message));
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const failure = error as InstanceType<typeof Anthropic.APIError>;
    const classes: Record<number, unknown> = {
      400: Anthropic.BadRequestError,
      401: Anthropic.AuthenticationError,
      404: Anthropic.NotFoundError,
      429: Anthropic.RateLimitError,
    };
    expect(failure).toBeInstanceOf(classes[expected.status] ?? Anthropic.InternalServerError);
    expect(failure.status).toBe(expected.status);
    const ref = failure.headers?.get("x-promptgate-ref");
    expect(failure.error).toMatchObject({
      type: "error",
      error: {
        type: expected.nativeType,
        message: expect.any(String),
        code: expected.code,
        promptgate: { code: expected.code, retryable: expected.retryable, ref },
      },
      request_id: ref,
    });
    expect(failure.requestID).toBe(ref);
    expectHeaders(failure.headers, expected);
    if (raw !== undefined) expect(JSON.stringify(failure.error)).not.toContain(raw);
    expect(harness.upstream.received).toHaveLength(1);
  });
});

/** The fake upstream opens an event stream, sends `frames`, then cuts the connection. */
function cutStreamAfter(...frames: string[]): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    for (const frame of frames) response.write(frame);
    setTimeout(() => response.socket?.destroy(), 10);
  });
}

/** Reads a stream to its end; resolves with what was read and the error it ended with. */
async function drain<T>(stream: AsyncIterable<T>): Promise<{ items: T[]; error: unknown }> {
  const items: T[] = [];
  const error = await rejectionOf(
    (async () => {
      for await (const item of stream) items.push(item);
    })(),
  );
  return { items, error };
}

describe("streams cut off in the middle of an event", () => {
  it("ends the openai SDK's stream with an APIError of class upstream, even before a whole event arrived", async () => {
    cutStreamAfter('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hal');
    const stream = await within(
      openai().chat.completions.create({ ...chat, stream: true }),
      5_000,
      "the stream to open",
    );
    const { items, error } = await drain(stream);
    expect(items).toEqual([]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: "upstream",
      type: "server_error",
      message: "The provider failed or could not be reached.",
      promptgate: { code: "upstream", retryable: true, ref: expect.stringMatching(refPattern) },
    });
  });

  it("ends the openai Responses stream with an error the SDK raises", async () => {
    cutStreamAfter(
      `event: response.created\ndata: ${JSON.stringify({ type: "response.created", sequence_number: 0, response: { id: "resp_1", object: "response", status: "in_progress", output: [] } })}\n\n`,
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","del',
    );
    const stream = await within(
      openai().responses.create({ model: "gpt-test", input: "hi", stream: true }),
      5_000,
      "the stream to open",
    );
    const { error } = await drain(stream);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(JSON.stringify((error as InstanceType<typeof OpenAI.APIError>).error)).toContain('"upstream"');
  });

  it("ends the Anthropic SDK's stream with its native error event, class upstream", async () => {
    cutStreamAfter(
      `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`,
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_bl',
    );
    const stream = await within(anthropic().messages.create({ ...message, stream: true }), 5_000, "the stream to open");
    const { items, error } = await drain(stream);
    expect(items.map((event) => event.type)).toEqual(["message_start"]);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: "error",
      error: { type: "api_error", code: "upstream", promptgate: { code: "upstream", retryable: true } },
    });
  });

  it("ends the Gemini SDK's stream with a final error frame it raises as ApiError 502", async () => {
    cutStreamAfter(
      `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "first" }] }, index: 0 }] })}\r\n\r\n`,
      'data: {"candidates": [{"content": {"role": "model", "parts": [{"te',
    );
    const stream = await within(
      gemini().models.generateContentStream({ model: "gemini-test", contents: "hi" }),
      5_000,
      "the stream to open",
    );
    const { items, error } = await drain(stream);
    expect(items.map((chunk) => chunk.text)).toEqual(["first"]);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    expect((error as ApiError).message).toContain('"upstream"');
  });

  it("ends a stream that starts and then hangs past the deadline with a timeout event", async () => {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "first" } }] })}\n\n`);
      response.write('data: {"choices":[{"ind');
    });
    const stream = await within(
      openai().chat.completions.create({ ...chat, stream: true }),
      5_000,
      "the stream to open",
    );
    const { items, error } = await drain(stream);
    expect(items.map((chunk) => chunk.choices[0]?.delta.content)).toEqual(["first"]);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: "timeout",
      promptgate: { retryable: true },
    });
  });
});

describe("an answer that is not a stream, read whole", () => {
  const completion = JSON.stringify({
    id: "chatcmpl-pieces",
    object: "chat.completion",
    created: 1,
    model: "gpt-test",
    choices: [{ index: 0, message: { role: "assistant", content: "é".repeat(3_000) }, finish_reason: "stop" }],
  });
  const bytes = Buffer.from(completion);

  it("arrives in pieces and reaches the client byte for byte", async () => {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": String(bytes.length) });
      const pieces = [bytes.subarray(0, 7), bytes.subarray(7, 3_001), bytes.subarray(3_001)];
      const next = () => {
        const piece = pieces.shift();
        if (piece === undefined) response.end();
        else response.write(piece, () => setTimeout(next, 5));
      };
      next();
    });
    const answer = await within(openai().chat.completions.create(chat), 5_000, "the answer");
    expect(answer.choices[0]?.message.content).toBe("é".repeat(3_000));
  });

  it("cut off after half its body is a native 502 of class upstream, not a hang", async () => {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": String(bytes.length) });
      response.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => response.socket?.destroy(), 10));
    });
    const error = await rejectionOf(openai().chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "upstream" });
  });

  it("hanging after half its body ends at the deadline as a timeout", async () => {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": String(bytes.length) });
      response.write(bytes.subarray(0, bytes.length >> 1));
    });
    const error = await rejectionOf(openai().chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "timeout" });
  });
});

describe("after every fault", () => {
  it("still serves a normal call on each surface", async () => {
    harness.upstream.answerWith(undefined);
    const completion = await within(openai().chat.completions.create(chat), 5_000, "the openai call");
    expect(completion.choices[0]?.message.content).toBeTruthy();
    const generated = await within(
      gemini().models.generateContent({ model: "gemini-test", contents: "hi" }),
      5_000,
      "the Gemini call",
    );
    expect(generated.text).toBeTruthy();
    const answered = await within(anthropic().messages.create(message), 5_000, "the Anthropic call");
    expect(answered.content.length).toBeGreaterThan(0);
    expect((await fetch(`${harness.gateway.url}/healthz`)).status).toBe(200);
    expect(harness.upstream.received).toHaveLength(3);
  });
});
