import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// A provider's stream that closes cleanly before its protocol's last event (OpenAI chat `[DONE]`, a Responses
// `response.completed`, Anthropic `message_stop`, Gemini a chunk with a finish reason) is a broken stream: the client
// gets the surface's native error event, which each SDK raises, and the call is recorded as failed `upstream`
// (`STREAM_CLOSED_EARLY`). So is a streamed call routed to another provider that answers with a whole JSON body
// (`NOT_AN_EVENT_STREAM`). Through each provider's SDK.

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({ ANTHROPIC_API_KEY: "anthropic-server-key" });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.answerWith(undefined);
  harness.logs.length = 0;
});

/** The upstream answers a stream of `events`, then closes without the protocol's last event. */
function closesAfter(events: string[]): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(events.join(""));
  });
}

/** The log line of the call the client just made. */
function lastCallLine(): Record<string, unknown> {
  const lines = harness.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
  return lines.findLast((line) => line.decision !== undefined) ?? {};
}

async function drain(stream: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _ of stream);
  } catch (error) {
    return error;
  }
  return undefined;
}

const brokenOff = { error: "upstream", upstream_reason: "STREAM_CLOSED_EARLY" };

describe("a native stream that closes before its last event", () => {
  it("OpenAI chat without [DONE]: the SDK raises the native error", async () => {
    closesAfter([
      'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"cut"}}]}\n\n',
    ]);
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: "gpt-test",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(await drain(stream)).toBeInstanceOf(OpenAI.APIError);
    expect(lastCallLine()).toMatchObject(brokenOff);
  });

  it("OpenAI Responses without response.completed: the SDK raises the native error", async () => {
    closesAfter([
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_cut","object":"response","status":"in_progress","output":[]}}\n\n',
    ]);
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
    const stream = await client.responses.create({ model: "gpt-test", input: "hi", stream: true });
    expect(await drain(stream)).toBeInstanceOf(OpenAI.APIError);
    expect(lastCallLine()).toMatchObject(brokenOff);
  });

  it("Anthropic without message_stop: the SDK raises the native error", async () => {
    closesAfter([
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_cut","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":0}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut"}}\n\n',
    ]);
    const client = new Anthropic({ apiKey: "client-key", baseURL: `${harness.gateway.url}/anthropic`, maxRetries: 0 });
    const stream = client.messages.stream({
      model: "claude-test",
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(await drain(stream)).toBeInstanceOf(Anthropic.APIError);
    expect(lastCallLine()).toMatchObject(brokenOff);
  });

  it("Gemini without a finish reason: the SDK raises the native error; with one, the stream is whole", async () => {
    const client = new GoogleGenAI({ apiKey: "client-key", httpOptions: { baseUrl: `${harness.gateway.url}/gemini` } });
    const request = { model: "gemini-2.5-flash", contents: "hi" };
    const chunk = (extra: Record<string, unknown>) =>
      `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "cut" }] }, index: 0, ...extra }] })}\r\n\r\n`;
    closesAfter([chunk({})]);
    expect(await drain(await client.models.generateContentStream(request))).toBeInstanceOf(Error);
    expect(lastCallLine()).toMatchObject(brokenOff);

    closesAfter([chunk({}), chunk({ finishReason: "STOP" })]);
    expect(await drain(await client.models.generateContentStream(request))).toBeUndefined();
    const whole = lastCallLine();
    expect(whole.decision).toBe("sent");
    expect(whole.error).toBeUndefined();
  });

  it("a streamed OpenAI call routed to Anthropic answered with a whole JSON body: the SDK raises the native error", async () => {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: "msg", type: "message", role: "assistant", content: [] }));
    });
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(await drain(stream)).toBeInstanceOf(OpenAI.APIError);
    expect(lastCallLine()).toMatchObject({ error: "upstream", upstream_reason: "NOT_AN_EVENT_STREAM" });
  });
});
