import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

const adminKey = "deadline-admin-key";
/** A policy whose provider calls may take half a second. */
const shortDeadline = `name = "deadline.short"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream]
deadline_seconds = 0.5
`;

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({
    PROMPTGATE_POLICIES: copyPolicies({ "deadline.short.toml": shortDeadline }),
    PROMPTGATE_ADMIN_KEY: adminKey,
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

/** A bounded wait: fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A signal that a test can wait on and the fake upstream can give. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Makes the fake upstream accept each request and then never answer; `received` opens on the request, `closed` when its connection goes. */
function hangUpstream(start?: (response: ServerResponse) => void) {
  const received = latch();
  const closed = latch();
  harness.upstream.answerWith((_request, response) => {
    response.once("close", closed.open);
    start?.(response);
    received.open();
  });
  return { received: received.promise, closed: closed.promise };
}

async function recordOf(ref: string | null): Promise<CallRecord> {
  // The record of a stream is written at its end, which may come a moment after the client saw it.
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (response.status === 200) return (await response.json()) as CallRecord;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no record for ${ref}`);
}

/** The log line of the call of a case. */
function logLineOf(caseId: string): Record<string, unknown> | undefined {
  return harness.logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.case === caseId);
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

const base = () => `${harness.gateway.url}/policies/deadline.short`;
const chat = { model: "gpt-test", messages: [{ role: "user" as const, content: "hello" }] };
const message = { model: "claude-test", max_tokens: 16, messages: [{ role: "user" as const, content: "hello" }] };

describe("the policy's upstream deadline", () => {
  it("aborts a provider call that does not answer and gives the openai SDK a retryable 504 timeout", async () => {
    const upstream = hangUpstream();
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${base()}/openai/v1`, maxRetries: 0 });
    const started = Date.now();
    const error = await within(rejectionOf(client.chat.completions.create(chat)), 5_000, "the timeout");
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    const timeout = error as InstanceType<typeof OpenAI.InternalServerError>;
    expect(timeout.status).toBe(504);
    expect(timeout.error).toMatchObject({
      code: "timeout",
      type: "server_error",
      message: "The provider did not answer in time.",
      promptgate: { code: "timeout", retryable: true },
    });
    expect(timeout.headers?.get("x-should-retry")).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    await within(upstream.closed, 2_000, "the upstream call to be aborted");
    const record = await recordOf(timeout.headers?.get("x-promptgate-ref") ?? null);
    expect(record).toMatchObject({ error: "timeout", upstream_error: { class: "timeout" } });
  });

  it("gives the Gemini SDK ApiError 504 DEADLINE_EXCEEDED", async () => {
    const upstream = hangUpstream();
    const client = new GoogleGenAI({ apiKey: "client-key", httpOptions: { baseUrl: `${base()}/gemini` } });
    const error = await within(
      rejectionOf(client.models.generateContent({ model: "gemini-test", contents: "hi" })),
      5_000,
      "the timeout",
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(504);
    expect(JSON.parse((error as ApiError).message).error).toMatchObject({
      code: 504,
      status: "DEADLINE_EXCEEDED",
      promptgate: { code: "timeout", retryable: true },
    });
    await within(upstream.closed, 2_000, "the upstream call to be aborted");
  });

  it("gives the Anthropic SDK a 504 timeout_error", async () => {
    const upstream = hangUpstream();
    const client = new Anthropic({ apiKey: "client-key", baseURL: `${base()}/anthropic`, maxRetries: 0 });
    const error = await within(rejectionOf(client.messages.create(message)), 5_000, "the timeout");
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as InstanceType<typeof Anthropic.InternalServerError>).status).toBe(504);
    expect((error as InstanceType<typeof Anthropic.InternalServerError>).error).toMatchObject({
      type: "error",
      error: { type: "timeout_error", code: "timeout" },
    });
    await within(upstream.closed, 2_000, "the upstream call to be aborted");
  });

  it("ends a stream that outlives the deadline with the native error event", async () => {
    const upstream = hangUpstream((response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "first" } }] })}\n\n`);
    });
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${base()}/openai/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ ...chat, stream: true });
    const texts: string[] = [];
    const error = await within(
      rejectionOf(
        (async () => {
          for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? "");
        })(),
      ),
      5_000,
      "the stream to end",
    );
    expect(texts).toEqual(["first"]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: "timeout",
      promptgate: { code: "timeout", retryable: true },
    });
    await within(upstream.closed, 2_000, "the upstream stream to be aborted");
  });
});

describe("a client that goes away", () => {
  it("aborts the provider call it was waiting for", async () => {
    const upstream = hangUpstream();
    const controller = new AbortController();
    const response = fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-promptgate-case": "gone-1" },
      body: JSON.stringify(chat),
      signal: controller.signal,
    });
    await within(upstream.received, 5_000, "the upstream call");
    controller.abort();
    await expect(response).rejects.toThrow();
    await within(upstream.closed, 5_000, "the upstream call to be aborted");
    await expect.poll(() => logLineOf("gone-1")).toMatchObject({ decision: "cancelled" });
    expect(logLineOf("gone-1")?.error).toBeUndefined();
  });

  it("aborts the provider's stream it was reading", async () => {
    const upstream = hangUpstream((response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "first" } }] })}\n\n`);
    });
    const controller = new AbortController();
    const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-promptgate-case": "gone-2" },
      body: JSON.stringify({ ...chat, stream: true }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await within(reader.read(), 5_000, "the first chunk");
    controller.abort();
    await within(upstream.closed, 5_000, "the upstream stream to be aborted");
    await expect.poll(() => logLineOf("gone-2")).toMatchObject({ decision: "cancelled" });
  });
});

describe("a provider stream that breaks off", () => {
  /** The fake upstream sends `frames`, then cuts the connection. */
  function breakAfter(contentFrames: string[]): void {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      for (const frame of contentFrames) response.write(frame);
      setTimeout(() => response.socket?.destroy(), 20);
    });
  }

  it("ends the openai SDK's stream with an APIError of class upstream", async () => {
    breakAfter([
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "first" } }] })}\n\n`,
      'data: {"cho',
    ]);
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ ...chat, stream: true });
    const texts: string[] = [];
    const error = await within(
      rejectionOf(
        (async () => {
          for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? "");
        })(),
      ),
      5_000,
      "the stream to end",
    );
    expect(texts).toEqual(["first"]);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: "upstream",
      message: "The provider failed or could not be reached.",
      promptgate: { retryable: true },
    });
  });

  it("ends the Anthropic SDK's stream with its error event", async () => {
    breakAfter([
      `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`,
    ]);
    const client = new Anthropic({ apiKey: "client-key", baseURL: `${harness.gateway.url}/anthropic`, maxRetries: 0 });
    const stream = await client.messages.create({ ...message, stream: true });
    const error = await within(
      rejectionOf(
        (async () => {
          for await (const _event of stream) {
            // Reading until the stream ends or fails.
          }
        })(),
      ),
      5_000,
      "the stream to end",
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: "error",
      error: { code: "upstream", promptgate: { retryable: true } },
    });
  });

  it("ends the Gemini SDK's stream with a final error frame it raises as ApiError 502", async () => {
    breakAfter([
      `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "first" }] }, index: 0 }] })}\r\n\r\n`,
    ]);
    const client = new GoogleGenAI({ apiKey: "client-key", httpOptions: { baseUrl: `${harness.gateway.url}/gemini` } });
    const stream = await client.models.generateContentStream({ model: "gemini-test", contents: "hi" });
    const texts: string[] = [];
    const error = await within(
      rejectionOf(
        (async () => {
          for await (const chunk of stream) texts.push(chunk.text ?? "");
        })(),
      ),
      5_000,
      "the stream to end",
    );
    expect(texts).toEqual(["first"]);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
  });

  it("replaces an error event the provider sends inside the stream with the class's fixed message", async () => {
    const raw = "Overloaded: the raw provider text for worker-7";
    breakAfter([
      `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: raw } })}\n\n`,
    ]);
    const response = await fetch(`${harness.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "client-key" },
      body: JSON.stringify({ ...message, stream: true }),
    });
    const text = await within(response.text(), 5_000, "the stream to end");
    expect(text).not.toContain(raw);
    expect(text).toContain("The provider is overloaded; retry later.");
    const record = await recordOf(response.headers.get("x-promptgate-ref"));
    expect(record).toMatchObject({
      error: "worker",
      upstream_error: { class: "worker", text: expect.stringContaining(raw) },
    });
  });
});
