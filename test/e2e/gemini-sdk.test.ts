import { ApiError, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

/** A request exactly as the SDK handed it to fetch. */
interface SentRequest {
  url: string;
  body: string;
}

let harness: GatewayUnderTest;
let sent: SentRequest[];
let client: GoogleGenAI;

const boundedGemini = () => `${harness.gateway.url}/policies/investigation.bounded/gemini`;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  sent = [];
  client = new GoogleGenAI({
    apiKey: "client-key",
    httpOptions: {
      baseUrl: boundedGemini(),
      // The SDK's own hook for its transport: it lets the test see the exact body it sent.
      fetch: async (input, init) => {
        sent.push({ url: String(input), body: typeof init?.body === "string" ? init.body : "" });
        return fetch(input, init);
      },
    },
  });
});

// Gemini takes this schema natively as it is, so the nested projection leaves the body unchanged.
const schema = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "string", enum: ["low", "high"] } },
  required: ["answer", "confidence"],
};

/** The prompt_size of a response, from the header @google/genai keeps on `sdkHttpResponse`. */
function sizeOf(result: { sdkHttpResponse?: { headers?: Record<string, string> } }): Record<string, unknown> {
  return JSON.parse(result.sdkHttpResponse?.headers?.["x-promptgate-prompt-size"] ?? "null");
}

function postJson(path: string, body: unknown): Promise<Response> {
  return fetch(`${boundedGemini()}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "client-key" },
    body: JSON.stringify(body),
  });
}

function withTimeout<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), milliseconds)),
  ]);
}

describe("the @google/genai SDK through the gateway", () => {
  it("sends an accepted generateContent upstream byte for byte, with the client's x-goog-api-key", async () => {
    const result = await client.models.generateContent({
      model: "gemini-test",
      contents: "Über 😀 café",
      config: {
        systemInstruction: "Answer in JSON.",
        responseMimeType: "application/json",
        responseJsonSchema: schema,
      },
    });
    expect(result.text).toBeTruthy();
    expect(sent).toHaveLength(1);
    expect(harness.upstream.received).toHaveLength(1);
    const upstream = harness.upstream.received[0]!;
    expect(upstream.url).toBe("/gemini/v1beta/models/gemini-test:generateContent");
    expect(upstream.body).toBe(sent[0]!.body);
    expect(upstream.headers["x-goog-api-key"]).toBe("client-key");
  });

  it("measures systemInstruction, the responseJsonSchema and the text of contents", async () => {
    const result = await client.models.generateContent({
      model: "gemini-test",
      contents: [
        { role: "user", parts: [{ text: "Über 😀 café" }] },
        { role: "model", parts: [{ text: "ok" }] },
        { role: "user", parts: [{ text: "again" }] },
      ],
      config: {
        systemInstruction: "Answer in JSON.",
        responseMimeType: "application/json",
        responseJsonSchema: schema,
      },
    });
    expect(result.sdkHttpResponse?.headers?.["x-promptgate-ref"]).toMatch(/^ref_[0-9a-f]{16}$/);
    expect(sizeOf(result)).toMatchObject({
      check: "preflight",
      system_chars: 15,
      message_chars: 11 + 2 + 5,
      tool_chars: 0,
      schema_chars: JSON.stringify(schema).length,
      total_chars: 15 + 18 + JSON.stringify(schema).length,
      reserve_chars: 1500,
      target_chars: 10000,
      limit_chars: 20000,
      over_target: false,
    });
    expect(sizeOf(result).policy).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
  });

  it("rejects an oversize call with ApiError 400 naming the code and the prompt_size, sending nothing", async () => {
    const error = await client.models
      .generateContent({ model: "gemini-test", contents: "x".repeat(18_501) })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.status).toBe(400);
    expect(apiError.message).toContain("INVESTIGATION_PROMPT_LIMIT");
    expect(apiError.message).toContain("prompt_size");
    // @google/genai keeps no headers on ApiError; its message is the JSON error body.
    const body = JSON.parse(apiError.message) as {
      error: { code: number; status: string; details: { reason: string }[]; promptgate: Record<string, unknown> };
    };
    expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(body.error.details[0]?.reason).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(body.error.promptgate).toMatchObject({
      code: "INVESTIGATION_PROMPT_LIMIT",
      retryable: false,
      prompt_size: { check: "preflight", total_chars: 18_501, conservative_total_chars: 20_001, limit_chars: 20_000 },
    });
    expect(sent).toHaveLength(1);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("accepts a call whose preflight lands exactly on limit minus reserve", async () => {
    await client.models.generateContent({ model: "gemini-test", contents: "x".repeat(18_500) });
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("streams generateContentStream through the gateway", async () => {
    const stream = await client.models.generateContentStream({ model: "gemini-test", contents: "stream please" });
    let text = "";
    let size: Record<string, unknown> | undefined;
    for await (const chunk of stream) {
      text += chunk.text ?? "";
      size ??= sizeOf(chunk);
    }
    expect(text).toContain("stream please");
    expect(size).toMatchObject({ check: "preflight", message_chars: 13 });
    expect(harness.upstream.received[0]?.url).toBe("/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse");
    expect(harness.upstream.received[0]?.body).toBe(sent[0]?.body);
  });

  it("hands the SDK each streamed chunk before the upstream stream has ended", async () => {
    let releaseRest: () => void = () => undefined;
    const restReleased = new Promise<void>((resolve) => {
      releaseRest = resolve;
    });
    const frame = (text: string, finish?: string) =>
      `data: ${JSON.stringify({
        candidates: [
          { content: { role: "model", parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) },
        ],
      })}\r\n\r\n`;
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(frame("first "));
      void restReleased.then(() => response.end(frame("second", "STOP")));
    });
    try {
      const stream = await client.models.generateContentStream({ model: "gemini-test", contents: "hi" });
      const iterator = stream[Symbol.asyncIterator]();
      const first = await withTimeout(iterator.next(), 5_000, "the first chunk");
      expect(first.value?.text).toBe("first ");
      releaseRest();
      const second = await iterator.next();
      expect(second.value?.text).toBe("second");
      expect((await iterator.next()).done).toBe(true);
    } finally {
      releaseRest();
    }
  });

  it("measures a countTokens call over the limit and forwards it instead of rejecting it", async () => {
    const result = await client.models.countTokens({ model: "gemini-test", contents: "x".repeat(30_000) });
    expect(result.totalTokens).toBeGreaterThan(0);
    expect(sizeOf(result)).toMatchObject({
      check: "preflight",
      message_chars: 30_000,
      conservative_total_chars: 31_500,
      limit_chars: 20_000,
      over_target: true,
    });
    expect(harness.upstream.received).toHaveLength(1);
    expect(harness.upstream.received[0]?.url).toBe("/gemini/v1beta/models/gemini-test:countTokens");
  });

  it("measures the snake_case wire names system_instruction and generation_config", async () => {
    const response = await postJson("/v1beta/models/gemini-test:generateContent", {
      contents: [{ role: "user", parts: [{ text: "hello" }] }],
      system_instruction: { parts: [{ text: "Answer in JSON." }] },
      generation_config: { response_mime_type: "application/json", response_json_schema: schema },
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null")).toMatchObject({
      system_chars: 15,
      message_chars: 5,
      schema_chars: JSON.stringify(schema).length,
    });
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("rejects a call whose system_instruction alone pushes it over the limit", async () => {
    const response = await postJson("/v1beta/models/gemini-test:generateContent", {
      contents: [{ role: "user", parts: [{ text: "hello" }] }],
      system_instruction: { parts: [{ text: "s".repeat(18_500) }] },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { promptgate: { code: string; prompt_size: unknown } } };
    expect(body.error.promptgate.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(body.error.promptgate.prompt_size).toMatchObject({ system_chars: 18_500, message_chars: 5 });
    expect(harness.upstream.received).toHaveLength(0);
  });
});
