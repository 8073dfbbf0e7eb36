import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

// The openai SDK, unchanged but for its base URL, reaches Gemini and Anthropic models by name. The fake upstream
// records the native bodies (answering through the simulated provider unless a test sets its answer).

const adminKey = "routing-admin-key";
let harness: GatewayUnderTest;
let client: OpenAI;

const tight = `name = "tight"
[window]
enforce = true
target_chars = 1000
limit_chars = 3000
reserve_chars = 0
`;

beforeAll(async () => {
  harness = await startGatewayUnderTest({
    PROMPTGATE_POLICIES: copyPolicies({ "tight.toml": tight }),
    PROMPTGATE_ADMIN_KEY: adminKey,
    GEMINI_API_KEY: "gemini-server-key",
    ANTHROPIC_API_KEY: "anthropic-server-key",
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
});

const schema = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "number", minimum: 0, maximum: 1 } },
  required: ["answer", "confidence"],
  additionalProperties: false,
};

/** A schema Gemini's projection keeps whole, so that the simulated answer conforms to it. */
const kept = { ...schema, properties: { answer: { type: "string" }, confidence: { type: "number" } } };

function lastBody(): Record<string, unknown> {
  return JSON.parse(harness.upstream.received.at(-1)?.body ?? "null");
}

function lastLog(): Record<string, unknown> {
  return JSON.parse(harness.logs.at(-1) ?? "null");
}

function answerJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

describe("a Gemini model through the openai SDK", () => {
  it("translates a chat completion with system text, a schema and parameters, and parses the answer", async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: "gemini-2.5-flash",
        messages: [
          { role: "system", content: "Answer in JSON." },
          { role: "user", content: "Über 😀" },
        ],
        response_format: { type: "json_schema", json_schema: { name: "answer", schema: kept, strict: true } },
        max_tokens: 200,
        temperature: 0.2,
        stop: ["END"],
        reasoning_effort: "low",
      })
      .withResponse();
    const sent = harness.upstream.received.at(-1);
    expect(sent?.url).toBe("/gemini/v1beta/models/gemini-2.5-flash:generateContent");
    // The provider's own server-held key; the client's key was given for the OpenAI API and stays here.
    expect(sent?.headers["x-goog-api-key"]).toBe("gemini-server-key");
    expect(sent?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(sent?.headers)).not.toContain("sk-client");
    expect(lastBody()).toMatchObject({
      systemInstruction: { parts: [{ text: "Answer in JSON." }] },
      contents: [{ role: "user", parts: [{ text: "Über 😀" }] }],
      generationConfig: {
        maxOutputTokens: 200,
        temperature: 0.2,
        stopSequences: ["END"],
        responseMimeType: "application/json",
        thinkingConfig: { thinkingBudget: 1024 },
      },
    });
    expect(data.object).toBe("chat.completion");
    expect(data.model).toBe("gemini-2.5-flash");
    expect(JSON.parse(data.choices[0]?.message.content ?? "")).toMatchObject({ answer: expect.any(String) });
    expect(response.headers.get("x-promptgate-model")).toBe("gemini-2.5-flash");
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect(lastLog()).toMatchObject({ surface: "openai", model: "gemini-2.5-flash", decision: "sent" });
  });

  it("validates the answer against the full schema, with the diagnostics of a native call", async () => {
    harness.upstream.answerWith((_request, response) =>
      answerJson(response, 200, {
        candidates: [
          {
            index: 0,
            content: { role: "model", parts: [{ text: '{"answer":"x","confidence":7}' }] },
            finishReason: "STOP",
          },
        ],
      }),
    );
    const { data, response } = await client.chat.completions
      .create({
        model: "gemini-2.5-flash",
        messages: [{ role: "user", content: "Hi" }],
        response_format: { type: "json_schema", json_schema: { name: "answer", schema, strict: true } },
      })
      .withResponse();
    expect(lastBody()).toMatchObject({ generationConfig: { responseJsonSchema: { type: "object" } } });
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    expect((data as unknown as { promptgate: unknown }).promptgate).toEqual({
      validation: {
        valid: false,
        errors: [
          { validation_path: "/confidence", validation_keyword: "maximum", hint: "confidence must be at most 1." },
        ],
      },
    });
  });

  it("streams a chat completion as chunks the SDK reads, ending with [DONE]", async () => {
    const stream = await client.chat.completions.create({
      model: "gemini-2.5-flash",
      messages: [{ role: "user", content: "Say something." }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(harness.upstream.received.at(-1)?.url).toBe(
      "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number) });
  });

  it("answers the Responses API, whole and streamed", async () => {
    const response = await client.responses.create({
      model: "gemini-2.5-flash",
      instructions: "Be brief.",
      input: "Hello",
      text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
    });
    expect(lastBody()).toMatchObject({ systemInstruction: { parts: [{ text: "Be brief." }] } });
    expect(response.status).toBe("completed");
    expect(JSON.parse(response.output_text)).toMatchObject({ answer: expect.any(String) });

    const stream = await client.responses.create({ model: "gemini-2.5-flash", input: "Hello", stream: true });
    let deltas = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") deltas += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    const message = completed?.output.find((item) => item.type === "message");
    const part = message?.type === "message" ? message.content[0] : undefined;
    expect(part?.type === "output_text" ? part.text : "").toBe(deltas);
    expect(deltas.length).toBeGreaterThan(0);
  });

  it("carries tool declarations and hands a tool call back in the OpenAI shape", async () => {
    harness.upstream.answerWith((_request, response) =>
      answerJson(response, 200, {
        candidates: [
          {
            index: 0,
            content: { role: "model", parts: [{ functionCall: { name: "lookup", args: { id: 7 } } }] },
            finishReason: "STOP",
          },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 13 },
      }),
    );
    const completion = await client.chat.completions.create({
      model: "gemini-2.5-flash",
      messages: [{ role: "user", content: "Find record 7." }],
      tools: [
        {
          type: "function",
          function: { name: "lookup", description: "Finds a record.", parameters: { type: "object" } },
        },
      ],
      tool_choice: "required",
    });
    expect(lastBody()).toMatchObject({
      tools: [{ functionDeclarations: [{ name: "lookup", description: "Finds a record." }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY" } },
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("lookup");
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({ id: 7 });
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
  });
});

describe("an Anthropic model through the openai SDK", () => {
  it("translates a chat completion with the Anthropic version and Anthropic's server-held key", async () => {
    const completion = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [
        { role: "developer", content: "Be brief." },
        { role: "user", content: "Hello" },
      ],
      max_completion_tokens: 300,
    });
    const sent = harness.upstream.received.at(-1);
    expect(sent?.url).toBe("/anthropic/v1/messages");
    expect(sent?.headers["x-api-key"]).toBe("anthropic-server-key");
    expect(sent?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(lastBody()).toMatchObject({
      model: "claude-sonnet-4-5",
      system: "Be brief.",
      max_tokens: 300,
      messages: [{ role: "user" }],
    });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    expect(completion.model).toBe("claude-sonnet-4-5");
  });

  it("streams a chat completion and a Responses answer", async () => {
    const chat = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of chat) text += chunk.choices[0]?.delta.content ?? "";
    expect(text.length).toBeGreaterThan(0);

    const responses = await client.responses.create({ model: "claude-haiku-4-5", input: "Hello", stream: true });
    let done = false;
    for await (const event of responses) if (event.type === "response.completed") done = true;
    expect(done).toBe(true);
  });

  it("refuses a parameter Anthropic has no counterpart for, naming it, before anything is sent", async () => {
    const refused = await client.chat.completions
      .create({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }], logit_bias: { "1": 2 } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("logit_bias");
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("an OpenAI-compatible server chosen in the model table", () => {
  it("gets the OpenAI body with its own model id and effort, and the answer names the client's model", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: "local", messages: [{ role: "user", content: "Hello" }], reasoning_effort: "high" })
      .withResponse();
    const sent = harness.upstream.received.at(-1);
    expect(sent?.url).toBe("/openai-compatible/v1/chat/completions");
    // No key is configured for it, and a local server may need none: the client's OpenAI key is not sent.
    expect(sent?.headers.authorization).toBeUndefined();
    expect(lastBody()).toEqual({
      model: "llama3.1:8b",
      messages: [{ role: "user", content: "Hello" }],
      reasoning_effort: "high",
    });
    expect(data.model).toBe("local");
    expect(response.headers.get("x-promptgate-model")).toBe("local");

    const stream = await client.chat.completions.create({
      model: "local",
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
    });
    const models = new Set<string>();
    for await (const chunk of stream) models.add(chunk.model);
    expect([...models]).toEqual(["local"]);
  });
});

describe("keys of a routed call", () => {
  it("refuses a routed call whose provider has no server-held key, naming the variable, and sends nothing", async () => {
    const keyless = await startGatewayUnderTest();
    try {
      const openai = new OpenAI({ apiKey: "sk-client", baseURL: `${keyless.gateway.url}/openai/v1`, maxRetries: 0 });
      const refused = await openai.chat.completions
        .create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "Hi" }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      const error = refused as InstanceType<typeof OpenAI.PermissionDeniedError>;
      expect((error.error as { code: string }).code).toBe("account_selection");
      expect(error.message).toContain("GEMINI_API_KEY");
      expect(keyless.upstream.received).toHaveLength(0);
    } finally {
      await keyless.close();
    }
  });
});

describe("reasoning levels", () => {
  it("refuses a level outside the allowlist or the model's levels, naming the accepted ones", async () => {
    for (const [model, effort] of [
      ["gpt-5", "minimal"],
      ["gemini-2.5-flash", "max"],
    ] as const) {
      const refused = await client.chat.completions
        .create({ model, messages: [{ role: "user", content: "Hi" }], reasoning_effort: effort })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.param).toBe("reasoning_effort");
      expect(error.message).toContain("use one of none, low, medium, high, xhigh");
    }
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("reasoning levels on the native APIs", () => {
  it("reads Gemini's thinking budget and Anthropic's thinking as levels and refuses one the model lacks", async () => {
    const gemini = await fetch(`${harness.gateway.url}/gemini/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "k" },
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        generationConfig: { thinkingConfig: { thinkingBudget: 0 } },
      }),
    });
    expect(gemini.status).toBe(400);
    const geminiError = (await gemini.json()) as { error: { message: string } };
    expect(geminiError.error.message).toContain("use one of low, medium, high, xhigh, max");
    const anthropic = await fetch(`${harness.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model: "claude-haiku-4-5",
        max_tokens: 70000,
        thinking: { type: "enabled", budget_tokens: 60000 },
        messages: [{ role: "user", content: "Hi" }],
      }),
    });
    expect(anthropic.status).toBe(400);
    expect(JSON.stringify(await anthropic.json())).toContain("thinking.budget_tokens");
    expect(harness.upstream.received).toHaveLength(0);
    const accepted = await fetch(`${harness.gateway.url}/gemini/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "k" },
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "Hi" }] }],
        generationConfig: { thinkingConfig: { thinkingBudget: 0 } },
      }),
    });
    expect(accepted.status).toBe(200);
  });
});

describe("the model list", () => {
  it("adds the table's named models to the provider's own list", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(["gemini-2.5-flash", "claude-sonnet-4-5", "fast"]));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("the window on a translated call", () => {
  const tools = Array.from({ length: 8 }, (_, index) => ({
    type: "function" as const,
    function: { name: `tool_${index}`, description: "A tool.", parameters: { type: "object" } },
  }));
  it("passes at exactly the limit of the body sent and refuses one code point more before the provider", async () => {
    const tightClient = new OpenAI({
      apiKey: "sk-client",
      baseURL: `${harness.gateway.url}/policies/tight/openai/v1`,
      maxRetries: 0,
    });
    const send = (text: string) =>
      tightClient.chat.completions
        .create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: text }], tools })
        .withResponse();
    await send("a".repeat(100));
    const probe = lastLog();
    const preflightExtra = (probe.preflight_conservative_total_chars as number) - 100;
    const providerExtra = (probe.provider_total_chars as number) - 100;
    // The provider check measured the translated body (Gemini's tool declarations), not the client's.
    expect(providerExtra).not.toBe((probe.preflight_total_chars as number) - 100);
    const binding = providerExtra > preflightExtra ? "provider" : "preflight";
    const fits = 3000 - Math.max(preflightExtra, providerExtra);
    await send("b".repeat(fits));
    expect(lastLog()).toMatchObject({ decision: "sent" });
    expect(
      Math.max(lastLog().provider_total_chars as number, lastLog().preflight_conservative_total_chars as number),
    ).toBe(3000);
    const before = harness.upstream.received.length;
    const refused = await send("c".repeat(fits + 1)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const body = (refused as InstanceType<typeof OpenAI.BadRequestError>).error as Record<string, unknown>;
    expect(body.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(body.promptgate).toMatchObject({ prompt_size: { check: binding, conservative_total_chars: 3001 } });
    expect(harness.upstream.received.length).toBe(before);
  });
});

/** Gemini answers 429 (a transient failure, so "fast" falls back), and Anthropic answers every call it gets. */
function geminiLimitedAnthropicAnswers(onCall: () => void = () => undefined): void {
  let answered = 0;
  harness.upstream.answerWith((request, response) => {
    onCall();
    if (request.url.startsWith("/gemini/")) {
      answerJson(response, 429, { error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } });
      return;
    }
    answerJson(response, 200, {
      id: `msg_0${++answered}`,
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [{ type: "text", text: "From the fallback." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 4 },
    });
  });
}

describe("one fallback within the deadline", () => {
  it("tries the fallback once after a transient failure and says so", async () => {
    let calls = 0;
    geminiLimitedAnthropicAnswers(() => calls++);
    const { data, response } = await client.chat.completions
      .create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
      .withResponse();
    expect(calls).toBe(2);
    expect(harness.upstream.received.map((request) => request.url)).toEqual([
      "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
      "/anthropic/v1/messages",
    ]);
    expect(data.choices[0]?.message.content).toBe("From the fallback.");
    expect(response.headers.get("x-promptgate-model")).toBe("claude-haiku-4-5");
    expect(response.headers.get("x-promptgate-model-fallback")).toBe("fast_to_claude-haiku-4-5");
    const record = await callRecord(response.headers.get("x-promptgate-ref") ?? "");
    expect(record.attempts).toMatchObject([
      { model: "fast", upstream_status: 429, error: "rate_limit", tried: true },
      { model: "claude-haiku-4-5", upstream_status: 200, tried: true },
    ]);
  });

  it("pins a session to the model that answered its first turn after a fallback", async () => {
    geminiLimitedAnthropicAnswers();
    const first = await client.responses.create({ model: "fast", input: "Hello" });
    harness.upstream.received.length = 0;
    const next = await client.responses
      .create({
        input: "And then?",
        previous_response_id: first.id,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .withResponse();
    expect(harness.upstream.received.map((request) => request.url)).toEqual(["/anthropic/v1/messages"]);
    expect(next.response.headers.get("x-promptgate-model-fallback")).toBeNull();
    const named = await client.responses.create({
      model: "claude-haiku-4-5",
      input: "Once more.",
      previous_response_id: next.data.id,
    });
    expect(named.output_text).toBe("From the fallback.");
    const refused = await client.responses
      .create({ model: "fast", input: "Back?", previous_response_id: named.id })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("SESSION_SETTINGS_CHANGED");
  });

  it("never falls back on a provider's own API, which reaches its own provider only", async () => {
    harness.upstream.answerWith((_request, response) =>
      answerJson(response, 429, { error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } }),
    );
    const answer = await fetch(`${harness.gateway.url}/gemini/v1beta/models/fast:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "k" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] }),
    });
    expect(answer.status).toBe(429);
    expect(answer.headers.get("x-promptgate-model-fallback")).toBeNull();
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("never falls back on a failure that is not transient", async () => {
    harness.upstream.answerWith((_request, response) =>
      answerJson(response, 401, { error: { code: 401, message: "bad key", status: "UNAUTHENTICATED" } }),
    );
    const refused = await client.chat.completions
      .create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("falls back after a 503 and keeps to one fallback when that fails too", async () => {
    harness.upstream.answerWith((_request, response) =>
      answerJson(response, 503, { error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } }),
    );
    const refused = await client.chat.completions
      .create({ model: "fast", messages: [{ role: "user", content: "Hello" }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(harness.upstream.received).toHaveLength(2);
  });
});

async function callRecord(ref: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}
