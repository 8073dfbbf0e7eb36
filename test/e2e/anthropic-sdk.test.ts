import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

/** A request exactly as the SDK handed it to fetch. */
interface SentRequest {
  url: string;
  headers: Headers;
  body: string;
}

let harness: GatewayUnderTest;
let sent: SentRequest[];
let client: Anthropic;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  sent = [];
  client = clientFor("investigation.bounded");
});

/** A stock client with only its base URL changed; its fetch records what it sends. */
function clientFor(policy: string, options: ConstructorParameters<typeof Anthropic>[0] = {}): Anthropic {
  return new Anthropic({
    apiKey: "client-key",
    baseURL: `${harness.gateway.url}/policies/${policy}/anthropic`,
    maxRetries: 0,
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      sent.push({
        url: String(input),
        headers: new Headers(init?.headers),
        body: typeof init?.body === "string" ? init.body : "",
      });
      return fetch(input, init);
    },
    ...options,
  });
}

const tools: Anthropic.Tool[] = [
  {
    name: "lookup",
    description: "Looks a term up.",
    input_schema: { type: "object", properties: { term: { type: "string" } }, required: ["term"] },
  },
];

function sizeHeader(response: Response | Headers): Record<string, unknown> {
  const headers = response instanceof Headers ? response : response.headers;
  return JSON.parse(headers.get("x-promptgate-prompt-size") ?? "null");
}

function withTimeout<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), milliseconds)),
  ]);
}

/** The body of an Anthropic error as the gateway renders it. */
interface GatewayErrorBody {
  type: string;
  error: { type: string; message: string; code: string; promptgate: Record<string, unknown> };
  request_id: string;
}

async function rejectionOf(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(Anthropic.APIError);
  return caught as InstanceType<typeof Anthropic.APIError>;
}

/** The text of the next text delta of a raw stream, or undefined once the stream has ended. */
async function nextTextDelta(events: AsyncIterator<Anthropic.RawMessageStreamEvent>): Promise<string | undefined> {
  for (let next = await events.next(); !next.done; next = await events.next()) {
    if (next.value.type === "content_block_delta" && next.value.delta.type === "text_delta")
      return next.value.delta.text;
  }
  return undefined;
}

describe("the @anthropic-ai/sdk client through the gateway", () => {
  it("sends an accepted messages.create upstream byte for byte, with its credential and anthropic-version", async () => {
    const message = await client.messages.create({
      model: "claude-test",
      max_tokens: 64,
      system: "Be brief.",
      messages: [{ role: "user", content: "Über 😀 café" }],
      tools,
      stop_sequences: ["END"],
      metadata: { user_id: "user-1" },
    });
    expect(message.content[0]?.type).toBe("text");
    expect(harness.upstream.received).toHaveLength(1);
    const upstream = harness.upstream.received[0]!;
    const request = sent[0]!;
    expect(upstream.url).toBe("/anthropic/v1/messages");
    expect(upstream.body).toBe(request.body);
    // SDK 1.x sends `apiKey` as `Authorization: Bearer`, not as `x-api-key`.
    expect(upstream.headers.authorization).toBe(request.headers.get("authorization"));
    expect(upstream.headers.authorization).toBe("Bearer client-key");
    expect(upstream.headers["anthropic-version"]).toBe(request.headers.get("anthropic-version"));
    expect(upstream.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("forwards an x-api-key credential and anthropic-beta as the client sent them", async () => {
    const keyed = clientFor("investigation.bounded", {
      apiKey: null,
      defaultHeaders: { "x-api-key": "client-key", "anthropic-beta": "some-beta-2026-01-01" },
    });
    await keyed.messages.create({ model: "claude-test", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    expect(sent[0]?.headers.get("x-api-key")).toBe("client-key");
    const upstream = harness.upstream.received[0]!;
    expect(upstream.headers["x-api-key"]).toBe("client-key");
    expect(upstream.headers["anthropic-beta"]).toBe("some-beta-2026-01-01");
    expect(upstream.headers["anthropic-version"]).toBe(sent[0]?.headers.get("anthropic-version"));
  });

  it("measures system, messages, tools, and the tool use ids as other", async () => {
    const { response } = await client.messages
      .create({
        model: "claude-test",
        max_tokens: 64,
        system: [{ type: "text", text: "Be brief." }],
        messages: [
          { role: "user", content: "Über 😀 café" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { term: "x" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }] },
        ],
        tools,
      })
      .withResponse();
    expect(response.headers.get("x-promptgate-ref")).toMatch(/^ref_[0-9a-f]{16}$/);
    const messageChars = 11 + "lookup".length + JSON.stringify({ term: "x" }).length + "found".length;
    const toolChars = JSON.stringify(tools[0]).length;
    const otherChars = '"id":"toolu_1"'.length + '"tool_use_id":"toolu_1"'.length;
    expect(sizeHeader(response)).toMatchObject({
      check: "preflight",
      system_chars: 9,
      message_chars: messageChars,
      tool_chars: toolChars,
      schema_chars: 0,
      other_chars: otherChars,
      total_chars: 9 + messageChars + toolChars + otherChars,
      reserve_chars: 1500,
      limit_chars: 20000,
      over_target: false,
    });
  });

  it("rejects an oversize call with BadRequestError carrying the code, the ref and the prompt_size, sending nothing", async () => {
    const error = await rejectionOf(
      client.messages.create({
        model: "claude-test",
        max_tokens: 16,
        messages: [{ role: "user", content: "x".repeat(18_501) }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.status).toBe(400);
    // The SDK keeps the whole response body on `error.error`: the native object is one level down.
    const body = error.error as GatewayErrorBody;
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(error.type).toBe("invalid_request_error");
    expect(body.error.promptgate).toMatchObject({
      code: "INVESTIGATION_PROMPT_LIMIT",
      retryable: false,
      prompt_size: { check: "preflight", total_chars: 18_501, conservative_total_chars: 20_001, limit_chars: 20_000 },
    });
    const ref = error.headers?.get("x-promptgate-ref");
    expect(ref).toMatch(/^ref_[0-9a-f]{16}$/);
    expect(error.headers?.get("request-id")).toBe(ref);
    expect(error.requestID).toBe(ref);
    expect(body.request_id).toBe(ref);
    expect(body.error.promptgate.ref).toBe(ref);
    expect(error.headers?.get("x-should-retry")).toBe("false");
    expect(harness.upstream.received).toHaveLength(0);
  });

  // the gateway puts its code only at `error.code`, so `errorCode` is null. Fix: render
  // `details: {error_code: code}` in render-anthropic-error.ts besides `code`.
  it("exposes the gateway's code as the SDK's errorCode", async () => {
    const error = await rejectionOf(
      client.messages.create({
        model: "claude-test",
        max_tokens: 16,
        messages: [{ role: "user", content: "x".repeat(18_501) }],
      }),
    );
    expect(error.errorCode).toBe("INVESTIGATION_PROMPT_LIMIT");
  });

  it("accepts a call whose preflight lands exactly on limit minus reserve", async () => {
    await client.messages.create({
      model: "claude-test",
      max_tokens: 16,
      messages: [{ role: "user", content: "x".repeat(18_500) }],
    });
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("streams messages.stream through the gateway", async () => {
    const stream = client.messages.stream({
      model: "claude-test",
      max_tokens: 64,
      messages: [{ role: "user", content: "stream please" }],
    });
    let text = "";
    stream.on("text", (delta) => {
      text += delta;
    });
    const message = await stream.finalMessage();
    expect(text).toContain("stream please");
    expect(message.content[0]?.type).toBe("text");
    expect(JSON.parse(harness.upstream.received[0]?.body ?? "{}")).toMatchObject({ stream: true });
  });

  it("hands create({stream: true}) each event before the upstream stream has ended", async () => {
    let releaseRest: () => void = () => undefined;
    const restReleased = new Promise<void>((resolve) => {
      releaseRest = resolve;
    });
    const event = (type: string, data: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(
        event("message_start", {
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "claude-test",
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 1, output_tokens: 0 },
          },
        }) +
          event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
          event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "first " } }),
      );
      void restReleased.then(() =>
        response.end(
          event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "second" } }) +
            event("content_block_stop", { index: 0 }) +
            event("message_delta", {
              delta: { stop_reason: "end_turn", stop_sequence: null },
              usage: { output_tokens: 2 },
            }) +
            event("message_stop", {}),
        ),
      );
    });
    try {
      const { data: stream, response } = await client.messages
        .create({ model: "claude-test", max_tokens: 16, stream: true, messages: [{ role: "user", content: "hi" }] })
        .withResponse();
      expect(sizeHeader(response)).toMatchObject({ message_chars: 2 });
      const events = stream[Symbol.asyncIterator]();
      expect(await withTimeout(nextTextDelta(events), 5_000, "the first delta")).toBe("first ");
      releaseRest();
      expect(await nextTextDelta(events)).toBe("second");
      expect(await nextTextDelta(events)).toBeUndefined();
    } finally {
      releaseRest();
    }
  });

  it("reports messages.countTokens over the limit without rejecting it", async () => {
    const { data, response } = await client.messages
      .countTokens({ model: "claude-test", messages: [{ role: "user", content: "x".repeat(30_000) }] })
      .withResponse();
    expect(data.input_tokens).toBeGreaterThan(0);
    expect(sizeHeader(response)).toMatchObject({
      check: "preflight",
      message_chars: 30_000,
      conservative_total_chars: 31_500,
      limit_chars: 20_000,
      over_target: true,
    });
    expect(harness.upstream.received).toHaveLength(1);
    expect(harness.upstream.received[0]?.url).toBe("/anthropic/v1/messages/count_tokens");
  });

  it("passes a 30,000-character call under the measure-only policy, under its 100,000 target", async () => {
    const measured = clientFor("case.interpretation");
    const { response } = await measured.messages
      .create({ model: "claude-test", max_tokens: 16, messages: [{ role: "user", content: "y".repeat(30_000) }] })
      .withResponse();
    expect(sizeHeader(response)).toMatchObject({
      check: "preflight",
      total_chars: 30_000,
      reserve_chars: 0,
      conservative_total_chars: 30_000,
      target_chars: 100_000,
      limit_chars: 1_000_000,
      over_target: false,
    });
    expect(sizeHeader(response).policy).toMatch(/^case\.interpretation@[0-9a-f]{12}$/);
    expect(harness.upstream.received).toHaveLength(1);
    expect(harness.upstream.received[0]?.body).toBe(sent[0]?.body);
  });

  it("forwards even a call over the limit under the measure-only policy, reporting it", async () => {
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-test",
          content: [{ type: "text", text: "ok" }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    });
    const measured = clientFor("case.interpretation");
    const { response } = await measured.messages
      .create({ model: "claude-test", max_tokens: 16, messages: [{ role: "user", content: "z".repeat(1_000_001) }] })
      .withResponse();
    expect(sizeHeader(response)).toMatchObject({
      total_chars: 1_000_001,
      conservative_total_chars: 1_000_001,
      limit_chars: 1_000_000,
      over_target: true,
    });
    expect(harness.upstream.received).toHaveLength(1);
  });
});
