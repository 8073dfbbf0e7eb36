import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import type { ReceivedRequest } from "../support/fake-upstream.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

// What the providers receive when the openai SDK, unchanged but for its base URL, calls a Gemini or an Anthropic
// model: the native body of each kind of call, snapshotted as the fake upstream recorded it; and where the one
// fallback of a model starts and stops.

const adminKey = "routing-bodies-admin-key";
/** The server-held keys a routed call is sent with (never the client's key for the OpenAI API). */
const providerKeys = { GEMINI_API_KEY: "gemini-server-key", ANTHROPIC_API_KEY: "anthropic-server-key" };
let harness: GatewayUnderTest;
let client: OpenAI;

beforeAll(async () => {
  harness = await startGatewayUnderTest({ PROMPTGATE_ADMIN_KEY: adminKey, ...providerKeys });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  client = clientOf(harness);
});

function clientOf(gateway: GatewayUnderTest, policy?: string): OpenAI {
  const base = policy === undefined ? "" : `/policies/${policy}`;
  return new OpenAI({ apiKey: "sk-client", baseURL: `${gateway.gateway.url}${base}/openai/v1`, maxRetries: 0 });
}

/** The headers a provider reads for the key, the version and the body's type; no other header is snapshotted. */
const snapshotHeaders = ["x-api-key", "x-goog-api-key", "anthropic-version", "content-type"];

/** One request as the provider received it: its URL, the headers above and the body parsed. */
function native(request: ReceivedRequest | undefined): {
  url: string;
  headers: Record<string, unknown>;
  body: unknown;
} {
  if (request === undefined) throw new Error("the fake upstream received no request");
  const headers = Object.fromEntries(
    snapshotHeaders.filter((name) => request.headers[name] !== undefined).map((name) => [name, request.headers[name]]),
  );
  return { url: request.url, headers, body: JSON.parse(request.body) };
}

/** The one request the fake upstream received for the case. */
function onlySent(): ReturnType<typeof native> {
  expect(harness.upstream.received).toHaveLength(1);
  return native(harness.upstream.received[0]);
}

function answerJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** Answers as the simulated provider would (the fake upstream's default), for a custom answer that only sometimes differs. */
const simulated = createSimulatedProvider();
async function answerSimulated(request: ReceivedRequest, outgoing: ServerResponse): Promise<void> {
  const response = await simulated.fetch(
    new Request(`http://fake.upstream${request.url}`, {
      method: request.method,
      headers: { "content-type": "application/json" },
      body: request.body,
    }),
  );
  outgoing.writeHead(response.status, Object.fromEntries(response.headers));
  const reader = response.body?.getReader();
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read())
    outgoing.write(chunk.value);
  outgoing.end();
}

/** A 1×1 PNG. */
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** A schema both providers keep whole (no numeric bounds), so that the simulated answer conforms to it. */
const answerSchema = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "number" } },
  required: ["answer", "confidence"],
  additionalProperties: false,
};

const weatherParameters = {
  type: "object",
  properties: { city: { type: "string", description: "The city's name." } },
  required: ["city"],
  additionalProperties: false,
};

const chatTools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "The current weather of a city.",
      parameters: weatherParameters,
      strict: true,
    },
  },
];

const responsesTools: OpenAI.Responses.FunctionTool[] = [
  {
    type: "function",
    name: "get_weather",
    description: "The current weather of a city.",
    parameters: weatherParameters,
    strict: true,
  },
];

type Provider = "gemini" | "anthropic";

/** A whole native answer that calls `get_weather` for Rome, in the provider's own shape. */
function toolCallAnswer(provider: Provider, model: string) {
  return (_request: ReceivedRequest, response: ServerResponse) => {
    if (provider === "gemini") {
      answerJson(response, 200, {
        candidates: [
          {
            index: 0,
            content: { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Rome" } } }] },
            finishReason: "STOP",
          },
        ],
        usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 5, totalTokenCount: 45 },
        modelVersion: model,
      });
      return;
    }
    answerJson(response, 200, {
      id: "msg_01ToolCall",
      type: "message",
      role: "assistant",
      model,
      content: [
        { type: "text", text: "Let me look that up." },
        { type: "tool_use", id: "toolu_01Rome", name: "get_weather", input: { city: "Rome" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 12 },
    });
  };
}

const routed = [
  { model: "gemini-2.5-flash", provider: "gemini" },
  { model: "claude-sonnet-4-5", provider: "anthropic" },
] as const;

describe.each(routed)("the native body for $model", ({ model, provider }) => {
  it("a chat completion with system and user text", async () => {
    const completion = await client.chat.completions.create({
      model,
      messages: [
        { role: "system", content: "Answer in one sentence." },
        { role: "user", content: "What is a gateway?" },
      ],
    });
    expect(onlySent()).toMatchSnapshot();
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe(model);
    expect(completion.choices[0]?.message.content).toEqual(expect.any(String));
    expect(completion.choices[0]?.finish_reason).toBe("stop");
  });

  it("a streamed chat completion with usage", async () => {
    const stream = await client.chat.completions.create({
      model,
      messages: [
        { role: "system", content: "Answer in one sentence." },
        { role: "user", content: "What is a gateway?" },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(onlySent()).toMatchSnapshot();
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
  });

  it("a chat completion with tools, a tool choice, an earlier tool call and its result", async () => {
    harness.upstream.answerWith(toolCallAnswer(provider, model));
    const completion = await client.chat.completions.create({
      model,
      messages: [
        { role: "system", content: "Use the tools." },
        { role: "user", content: "What is the weather in Paris?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_paris", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_paris", content: '{"temperature_c":21,"sky":"clear"}' },
        { role: "user", content: "And in Rome?" },
      ],
      tools: chatTools,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      // Anthropic can be told to call one tool at a time; Gemini cannot, so it refuses `false` (a test of its own).
      ...(provider === "anthropic" ? { parallel_tool_calls: false } : {}),
    });
    expect(onlySent()).toMatchSnapshot();
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe("function");
    if (call?.type !== "function") return;
    expect(call.function.name).toBe("get_weather");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Rome" });
    expect(call.id).toEqual(expect.any(String));
    if (provider === "anthropic") {
      expect(call.id).toBe("toolu_01Rome");
      expect(choice?.message.content).toBe("Let me look that up.");
    }
  });

  it("a chat completion with a json_schema response format", async () => {
    const completion = await client.chat.completions.create({
      model,
      messages: [{ role: "user", content: "Is the sky blue?" }],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "answer",
          description: "An answer and how sure it is.",
          schema: answerSchema,
          strict: true,
        },
      },
      max_completion_tokens: 300,
      temperature: 0.2,
    });
    expect(onlySent()).toMatchSnapshot();
    expect(JSON.parse(completion.choices[0]?.message.content ?? "")).toEqual({
      answer: expect.any(String),
      confidence: expect.any(Number),
    });
  });

  it("a chat completion with an image as a data URL", async () => {
    const completion = await client.chat.completions.create({
      model,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${pngBase64}`, detail: "low" } },
          ],
        },
      ],
    });
    expect(onlySent()).toMatchSnapshot();
    expect(completion.choices[0]?.message.content).toEqual(expect.any(String));
  });

  it("a Responses call with instructions and input", async () => {
    const response = await client.responses.create({
      model,
      instructions: "Answer in one sentence.",
      input: "What is a gateway?",
      max_output_tokens: 500,
    });
    expect(onlySent()).toMatchSnapshot();
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.model).toBe(model);
    expect(response.output_text.length).toBeGreaterThan(0);
  });

  it("a streamed Responses call", async () => {
    const stream = await client.responses.create({
      model,
      instructions: "Answer in one sentence.",
      input: "What is a gateway?",
      stream: true,
    });
    let deltas = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") deltas += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(onlySent()).toMatchSnapshot();
    expect(deltas.length).toBeGreaterThan(0);
    expect(completed?.status).toBe("completed");
    const message = completed?.output.find((item) => item.type === "message");
    const part = message?.type === "message" ? message.content[0] : undefined;
    expect(part?.type === "output_text" ? part.text : undefined).toBe(deltas);
    expect(completed?.usage?.input_tokens).toEqual(expect.any(Number));
  });

  it("a Responses call with function tools and a function call and its output", async () => {
    harness.upstream.answerWith(toolCallAnswer(provider, model));
    const response = await client.responses.create({
      model,
      instructions: "Use the tools.",
      input: [
        { role: "user", content: "What is the weather in Paris?" },
        { type: "function_call", call_id: "call_paris", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_paris", output: '{"temperature_c":21,"sky":"clear"}' },
        { role: "user", content: [{ type: "input_text", text: "And in Rome?" }] },
      ],
      tools: responsesTools,
      tool_choice: "required",
    });
    expect(onlySent()).toMatchSnapshot();
    const call = response.output.find((item) => item.type === "function_call");
    expect(call?.type === "function_call" && call.name).toBe("get_weather");
    expect(call?.type === "function_call" && JSON.parse(call.arguments)).toEqual({ city: "Rome" });
    expect(call?.type === "function_call" && call.call_id).toEqual(expect.any(String));
  });

  it("a Responses call with a json_schema text format", async () => {
    const response = await client.responses.create({
      model,
      input: "Is the sky blue?",
      text: { format: { type: "json_schema", name: "answer", schema: answerSchema, strict: true } },
    });
    expect(onlySent()).toMatchSnapshot();
    expect(JSON.parse(response.output_text)).toEqual({ answer: expect.any(String), confidence: expect.any(Number) });
  });
});

// ---------------------------------------------------------------------------------------------
// Fallback boundaries

/** A policy whose provider calls (both attempts of a call together) may take one second. */
const quickPolicy = `name = "quick"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream]
deadline_seconds = 1
`;

/** The shipped model table, and a model whose fallback lacks the reasoning level the model has. */
const modelTable = `${readFileSync("policies/models.toml", "utf8")}
[model.primary]
provider = "gemini"
upstream_model = "gemini-2.5-flash"
reasoning = ["high"]
fallback = "backup"

[model.backup]
provider = "anthropic"
upstream_model = "claude-haiku-4-5"
reasoning = ["low"]
`;

/** A bounded wait: fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function callRecord(gateway: GatewayUnderTest, ref: string | null | undefined): Promise<Record<string, unknown>> {
  // A record is written as the call ends, which may come a moment after the client saw its answer.
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(`${gateway.gateway.url}/promptgate/admin/calls/${ref}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (response.status === 200) return (await response.json()) as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no call record for ${ref}`);
}

const rateLimited = { error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } };

describe("the fallback of fast (Gemini, then claude-haiku-4-5)", () => {
  it("is tried after Gemini's 504 (timeout)", async () => {
    harness.upstream.answerWith((request, response) => {
      if (request.url.startsWith("/gemini/")) {
        answerJson(response, 504, { error: { code: 504, status: "DEADLINE_EXCEEDED", message: "x" } });
        return;
      }
      void answerSimulated(request, response);
    });
    const { data, response } = await client.chat.completions
      .create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
      .withResponse();
    expect(harness.upstream.received.map((request) => request.url)).toEqual([
      "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
      "/anthropic/v1/messages",
    ]);
    expect(native(harness.upstream.received[1]).body).toMatchObject({ model: "claude-haiku-4-5" });
    expect(data.choices[0]?.message.content).toEqual(expect.any(String));
    expect(data.model).toBe("claude-haiku-4-5");
    expect(response.headers.get("x-promptgate-model")).toBe("claude-haiku-4-5");
    expect(response.headers.get("x-promptgate-model-fallback")).toBe("fast_to_claude-haiku-4-5");
    const record = await callRecord(harness, response.headers.get("x-promptgate-ref"));
    expect(record.attempts).toMatchObject([
      { model: "fast", upstream_status: 504, error: "timeout", tried: true },
      { model: "claude-haiku-4-5", upstream_status: 200, tried: true },
    ]);
  });

  it("is tried after a connection that closed without an answer (upstream)", async () => {
    harness.upstream.answerWith((request, response) => {
      if (request.url.startsWith("/gemini/")) {
        response.socket?.destroy();
        return;
      }
      void answerSimulated(request, response);
    });
    const { data, response } = await client.chat.completions
      .create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
      .withResponse();
    expect(harness.upstream.received).toHaveLength(2);
    expect(data.choices[0]?.message.content).toEqual(expect.any(String));
    expect(response.headers.get("x-promptgate-model-fallback")).toBe("fast_to_claude-haiku-4-5");
    const record = await callRecord(harness, response.headers.get("x-promptgate-ref"));
    expect(record.attempts).toMatchObject([
      { model: "fast", error: "upstream", tried: true },
      { model: "claude-haiku-4-5", upstream_status: 200, tried: true },
    ]);
    expect((record.attempts as { upstream_status?: number }[])[0]?.upstream_status).toBeUndefined();
  });

  it("is not tried for a model without one", async () => {
    harness.upstream.answerWith((_request, response) => answerJson(response, 429, rateLimited));
    const refused = await client.chat.completions
      .create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "Hello" }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("streams after the first attempt's 429, read by the SDK to its end", async () => {
    harness.upstream.answerWith((request, response) => {
      if (request.url.startsWith("/gemini/")) {
        answerJson(response, 429, rateLimited);
        return;
      }
      void answerSimulated(request, response);
    });
    const { data: stream, response } = await client.chat.completions
      .create({
        model: "fast",
        messages: [{ role: "user", content: "Hello" }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let text = "";
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    const models = new Set<string>();
    for await (const chunk of stream) {
      models.add(chunk.model);
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(harness.upstream.received.map((request) => request.url)).toEqual([
      "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
      "/anthropic/v1/messages",
    ]);
    expect(native(harness.upstream.received[1]).body).toMatchObject({ model: "claude-haiku-4-5", stream: true });
    expect(response.headers.get("x-promptgate-model-fallback")).toBe("fast_to_claude-haiku-4-5");
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number) });
    expect([...models]).toEqual(["claude-haiku-4-5"]);
  });
});

describe("fallback boundaries under a policy's deadline and the model's levels", () => {
  let quick: GatewayUnderTest;
  beforeAll(async () => {
    quick = await startGatewayUnderTest({
      PROMPTGATE_POLICIES: copyPolicies({ "quick.toml": quickPolicy, "models.toml": modelTable }),
      PROMPTGATE_ADMIN_KEY: adminKey,
      ...providerKeys,
    });
  });
  afterAll(() => quick.close());
  beforeEach(() => {
    quick.upstream.received.length = 0;
    quick.upstream.answerWith(undefined);
  });

  it("is not tried once the deadline has passed on the first attempt", async () => {
    let hung: ServerResponse | undefined;
    quick.upstream.answerWith((_request, response) => {
      // Never answers: the gateway gives up at the policy's deadline.
      hung = response;
    });
    const started = Date.now();
    const refused = await within(
      clientOf(quick, "quick")
        .chat.completions.create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
        .catch((error: unknown) => error),
      10_000,
      "the deadline",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const error = refused as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(504);
    expect(error.code).toBe("timeout");
    expect(quick.upstream.received).toHaveLength(1);
    expect(quick.upstream.received[0]?.url).toBe("/gemini/v1beta/models/gemini-2.5-flash:generateContent");
    expect(hung).toBeDefined();
    const record = await callRecord(quick, error.headers?.get("x-request-id"));
    expect(record.attempts).toBeUndefined();
    expect(record).toMatchObject({ error: "timeout", model: "fast" });
  });

  it("keeps the first attempt's deadline for the fallback", async () => {
    quick.upstream.answerWith((request, response) => {
      // Gemini fails transiently after 600 ms; Anthropic never answers.
      if (request.url.startsWith("/gemini/")) setTimeout(() => answerJson(response, 429, rateLimited), 600);
    });
    const started = Date.now();
    const refused = await within(
      clientOf(quick, "quick")
        .chat.completions.create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
        .catch((error: unknown) => error),
      10_000,
      "the deadline",
    );
    const elapsed = Date.now() - started;
    expect(quick.upstream.received.map((request) => request.url)).toEqual([
      "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
      "/anthropic/v1/messages",
    ]);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const error = refused as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(504);
    expect(error.code).toBe("timeout");
    // One second for both attempts together, not one for each.
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(1500);
  });

  // A fallback that gets no answer is on the record too, as the second attempt with its error.
  it("records both attempts when the fallback runs out of the deadline", async () => {
    quick.upstream.answerWith((request, response) => {
      if (request.url.startsWith("/gemini/")) setTimeout(() => answerJson(response, 429, rateLimited), 300);
    });
    const refused = await clientOf(quick, "quick")
      .chat.completions.create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const error = refused as InstanceType<typeof OpenAI.APIError>;
    const record = await callRecord(quick, error.headers?.get("x-request-id"));
    expect(record.attempts).toMatchObject([
      { model: "fast", upstream_status: 429, error: "rate_limit", tried: true },
      { model: "claude-haiku-4-5", error: "timeout", tried: true },
    ]);
  });

  it("is not tried when the fallback lacks the reasoning level asked for; the client gets the first failure", async () => {
    quick.upstream.answerWith((_request, response) => answerJson(response, 429, rateLimited));
    const refused = await clientOf(quick)
      .chat.completions.create({
        model: "primary",
        messages: [{ role: "user", content: "Hello" }],
        reasoning_effort: "high",
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(quick.upstream.received).toHaveLength(1);
    expect(native(quick.upstream.received[0]).body).toMatchObject({
      generationConfig: { thinkingConfig: { thinkingBudget: 16384 } },
    });
    const error = refused as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error.headers?.get("x-promptgate-model-fallback")).toBeNull();
    const record = await callRecord(quick, error.headers?.get("x-request-id"));
    expect(record.attempts).toMatchObject([
      { model: "primary", upstream_status: 429, error: "rate_limit", tried: true },
      { model: "backup", error: "INVALID_REQUEST", tried: false },
    ]);
    expect(record).toMatchObject({ model: "primary", error: "rate_limit", upstream_status: 429 });
  });

  // A fallback refused before it is measured leaves the first attempt's sizes on the record.
  it("keeps the first attempt's preflight in the record when the fallback is refused before it is measured", async () => {
    quick.upstream.answerWith((_request, response) => answerJson(response, 429, rateLimited));
    const refused = await clientOf(quick)
      .chat.completions.create({
        model: "primary",
        messages: [{ role: "user", content: "Hello" }],
        reasoning_effort: "high",
      })
      .catch((error: unknown) => error);
    const error = refused as InstanceType<typeof OpenAI.RateLimitError>;
    const record = await callRecord(quick, error.headers?.get("x-request-id"));
    expect(record.provider_check).toMatchObject({ check: "provider", total_chars: 5 });
    expect(record.preflight).toMatchObject({ check: "preflight", total_chars: 5 });
  });
});

describe("a fallback over the limit by its own provider check", () => {
  /** Tools without parameters: Anthropic's translation adds the `input_schema` it requires to each, Gemini's nothing. */
  const body = {
    model: "fast",
    messages: [{ role: "user" as const, content: "a".repeat(100) }],
    tools: Array.from({ length: 10 }, (_, index) => ({
      type: "function" as const,
      function: { name: `tool_${index}` },
    })),
  };

  /** The sizes the preflight and the provider check of a model measure for the body, under the default policy. */
  async function sizesFor(model: string): Promise<{ preflight: number; provider: number }> {
    await client.chat.completions.create({ ...body, model });
    const log = JSON.parse(harness.logs.at(-1) ?? "null") as Record<string, number>;
    return { preflight: log.preflight_total_chars as number, provider: log.provider_total_chars as number };
  }

  it("is not tried; the client gets the first failure and the record says why", async () => {
    const gemini = await sizesFor("gemini-2.5-flash");
    const anthropic = await sizesFor("claude-haiku-4-5");
    // The body fits the preflight and Gemini's check at this limit; only the Anthropic body is over it.
    const limit = anthropic.provider - 1;
    expect(gemini.preflight).toBeLessThanOrEqual(limit);
    expect(gemini.provider).toBeLessThanOrEqual(limit);
    const narrow = await startGatewayUnderTest({
      PROMPTGATE_POLICIES: copyPolicies({
        "narrow.toml": `name = "narrow"\n[window]\nenforce = true\ntarget_chars = ${limit}\nlimit_chars = ${limit}\nreserve_chars = 0\n`,
      }),
      PROMPTGATE_ADMIN_KEY: adminKey,
      ...providerKeys,
    });
    try {
      narrow.upstream.answerWith((_request, response) => answerJson(response, 429, rateLimited));
      const refused = await clientOf(narrow, "narrow")
        .chat.completions.create(body)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      expect(narrow.upstream.received.map((request) => request.url)).toEqual([
        "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
      ]);
      const error = refused as InstanceType<typeof OpenAI.RateLimitError>;
      expect(error.headers?.get("x-promptgate-model-fallback")).toBeNull();
      const record = await callRecord(narrow, error.headers?.get("x-request-id"));
      expect(record.attempts).toMatchObject([
        { model: "fast", upstream_status: 429, error: "rate_limit", tried: true },
        {
          model: "claude-haiku-4-5",
          error: "INVESTIGATION_PROMPT_LIMIT",
          tried: false,
        },
      ]);
      // The top-level fields describe the attempt whose answer the client got.
      expect(record).toMatchObject({
        error: "rate_limit",
        upstream_model: "gemini-2.5-flash",
        provider_check: { check: "provider", total_chars: gemini.provider },
        preflight: { check: "preflight", total_chars: gemini.preflight },
      });
    } finally {
      await narrow.close();
    }
  });
});
