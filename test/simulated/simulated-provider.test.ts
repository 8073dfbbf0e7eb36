import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { maxEchoLength, simulatedAnswerPrefix } from "../../src/simulated/answer.js";
import { createSimulatedProvider, simulatedOrigin } from "../../src/simulated/simulated-provider.js";

const sim = createSimulatedProvider();
const routeToSimulator = (url: string | URL | Request, init?: RequestInit) => sim.fetch(new Request(url, init));

function post(path: string, body: unknown): Promise<Response> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return sim.fetch(
    new Request(`${simulatedOrigin}${path}`, {
      method: "POST",
      body: text,
      headers: { "content-type": "application/json" },
    }),
  );
}

/** Splits an SSE body into its frames' `event:` and parsed `data:` lines. */
function sseFrames(text: string, separator = "\n\n"): { event: string | undefined; data: string }[] {
  return text
    .split(separator)
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const lines = frame.split(/\r?\n/);
      const event = lines.find((line) => line.startsWith("event: "))?.slice("event: ".length);
      const data = lines.find((line) => line.startsWith("data: "))?.slice("data: ".length) ?? "";
      return { event, data };
    });
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);

function conformsTo(schema: unknown, document: unknown): boolean {
  const valid = ajv.validate(schema as object, document);
  if (!valid) console.error(JSON.stringify(ajv.errors), JSON.stringify(document));
  return valid;
}

const chatBody = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-test",
  messages: [
    { role: "system", content: "Be terse." },
    { role: "user", content: text },
  ],
  ...extra,
});
const geminiBody = (text: string, generationConfig?: Record<string, unknown>) => ({
  contents: [{ role: "user", parts: [{ text }] }],
  ...(generationConfig === undefined ? {} : { generationConfig }),
});
const anthropicBody = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "claude-test",
  max_tokens: 256,
  messages: [{ role: "user", content: text }],
  ...extra,
});

const geminiGenerate = "/gemini/v1beta/models/gemini-test:generateContent";

const schemas: Record<string, Record<string, unknown>> = {
  "a strict object with enums, patterns and a nullable field": {
    type: "object",
    properties: {
      findings: {
        type: "array",
        minItems: 1,
        items: {
          type: "object",
          properties: {
            id: { type: "string", pattern: "^F[0-9]{1,3}$" },
            direction: { type: "string", enum: ["supports", "contradicts"] },
            evidence_refs: { type: "array", items: { type: "string", pattern: "^E[0-9]{6}$" } },
          },
          required: ["id", "direction", "evidence_refs"],
          additionalProperties: false,
        },
      },
      note: { anyOf: [{ type: "string", maxLength: 40 }, { type: "null" }] },
      confidence: { type: "number", minimum: 0, maximum: 1 },
    },
    required: ["findings", "note", "confidence"],
    additionalProperties: false,
  },
  "a 2020-12 schema with $defs, $ref and formats": {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: {
      party: {
        type: "object",
        properties: { email: { type: "string", format: "email" }, id: { type: "string", format: "uuid" } },
        required: ["email", "id"],
      },
    },
    type: "object",
    properties: { buyer: { $ref: "#/$defs/party" }, issued: { type: "string", format: "date-time" } },
    required: ["buyer", "issued"],
  },
  "a draft-07 style schema with definitions": {
    definitions: { line: { type: "object", properties: { qty: { type: "integer", minimum: 1 } }, required: ["qty"] } },
    type: "object",
    properties: { lines: { type: "array", items: { $ref: "#/definitions/line" }, minItems: 1, maxItems: 3 } },
    required: ["lines"],
  },
  "a recursive schema": {
    type: "object",
    properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
    required: ["name"],
  },
  "a oneOf of tagged alternatives": {
    type: "object",
    properties: {
      next: {
        oneOf: [
          {
            type: "object",
            properties: { action: { const: "answer" }, text: { type: "string" } },
            required: ["action", "text"],
            additionalProperties: false,
          },
          {
            type: "object",
            properties: { action: { const: "query" }, limit: { type: "integer", minimum: 1, maximum: 10 } },
            required: ["action", "limit"],
            additionalProperties: false,
          },
        ],
      },
    },
    required: ["next"],
  },
};

describe("the simulated provider answers plain fetch requests", () => {
  it("answers a chat completion with the labelled echo of the last user text and the requested model", async () => {
    const response = await post("/openai/v1/chat/completions", chatBody("What is  the\nweather?"));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-simulated")).toBe("true");
    const completion = await response.json();
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("gpt-test");
    expect(completion.choices[0].message.content).toBe(`${simulatedAnswerPrefix}What is the weather?`);
    expect(completion.choices[0].finish_reason).toBe("stop");
  });

  it("shortens the echo to at most 200 characters", async () => {
    const response = await post("/openai/v1/chat/completions", chatBody("🙂".repeat(500)));
    const content: string = (await response.json()).choices[0].message.content;
    const echoed = Array.from(content.slice(simulatedAnswerPrefix.length));
    expect(echoed.length).toBe(maxEchoLength);
    expect(echoed.at(-1)).toBe("…");
  });

  it("states token usage as one token per started four characters", async () => {
    const response = await post("/openai/v1/chat/completions", chatBody("abcdefgh"));
    const { usage, choices } = await response.json();
    expect(usage.prompt_tokens).toBe(Math.ceil("Be terse.abcdefgh".length / 4));
    expect(usage.completion_tokens).toBe(Math.ceil(choices[0].message.content.length / 4));
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("streams chat completion chunks that end with a usage chunk and [DONE] when usage is asked for", async () => {
    const response = await post(
      "/openai/v1/chat/completions",
      chatBody("stream me", { stream: true, stream_options: { include_usage: true } }),
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const frames = sseFrames(await response.text());
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.data));
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe(`${simulatedAnswerPrefix}stream me`);
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(1);
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
  });

  it("streams chat completion chunks without a usage chunk when usage is not asked for", async () => {
    const response = await post("/openai/v1/chat/completions", chatBody("stream me", { stream: true }));
    const chunks = sseFrames(await response.text())
      .slice(0, -1)
      .map((frame) => JSON.parse(frame.data));
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
    expect(chunks.some((chunk) => "usage" in chunk)).toBe(false);
  });

  it("answers a Responses request with a completed response whose output holds the echo", async () => {
    const response = await post("/openai/v1/responses", { model: "gpt-test", input: "Hello responses" });
    const body = await response.json();
    expect(body.object).toBe("response");
    expect(body.status).toBe("completed");
    expect(body.model).toBe("gpt-test");
    expect(body.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: "message",
        role: "assistant",
        status: "completed",
        content: [
          { type: "output_text", text: `${simulatedAnswerPrefix}Hello responses`, annotations: [], logprobs: [] },
        ],
      },
    ]);
    // `output_text` is the SDK's convenience; the API does not send it.
    expect(body).not.toHaveProperty("output_text");
  });

  it("echoes the last user message of a Responses input list", async () => {
    const input = [
      { role: "user", content: "first" },
      { role: "assistant", content: "reply" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "second" }] },
    ];
    const body = await (await post("/openai/v1/responses", { model: "gpt-test", input })).json();
    expect(outputText(body)).toBe(`${simulatedAnswerPrefix}second`);
  });

  it("streams the Responses event sequence with numbered events", async () => {
    const response = await post("/openai/v1/responses", { model: "gpt-test", input: "Hello stream", stream: true });
    const frames = sseFrames(await response.text());
    const events = frames.map((frame) => ({ name: frame.event, data: JSON.parse(frame.data) }));
    const names = events.map((event) => event.name);
    const deltas = names.filter((name) => name === "response.output_text.delta").length;
    expect(deltas).toBeGreaterThan(1);
    expect(names).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array(deltas).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.every((event, index) => event.data.type === event.name && event.data.sequence_number === index)).toBe(
      true,
    );
    expect(outputText(events.at(-1)?.data.response)).toBe(`${simulatedAnswerPrefix}Hello stream`);
  });

  it("lists a few simulated models", async () => {
    const response = await sim.fetch(new Request(`${simulatedOrigin}/openai/v1/models`));
    const body = await response.json();
    expect(body.object).toBe("list");
    expect(body.data.length).toBeGreaterThan(1);
    expect(body.data.every((model: { object: string }) => model.object === "model")).toBe(true);
  });

  it("answers Gemini generateContent with one candidate that echoes the last user turn", async () => {
    const response = await post(geminiGenerate, geminiBody("Hallo Gemini"));
    expect(response.headers.get("x-promptgate-simulated")).toBe("true");
    const body = await response.json();
    expect(body.modelVersion).toBe("gemini-test");
    expect(body.candidates[0].content).toEqual({
      role: "model",
      parts: [{ text: `${simulatedAnswerPrefix}Hallo Gemini` }],
    });
    expect(body.candidates[0].finishReason).toBe("STOP");
    expect(body.usageMetadata.totalTokenCount).toBe(
      body.usageMetadata.promptTokenCount + body.usageMetadata.candidatesTokenCount,
    );
  });

  it("accepts the v1 API version of Gemini as well as v1beta", async () => {
    const response = await post("/gemini/v1/models/gemini-test:generateContent", geminiBody("v1"));
    expect(response.status).toBe(200);
  });

  it("streams Gemini responses as CRLF-separated SSE frames with alt=sse", async () => {
    const response = await post(
      "/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
      geminiBody("Hallo stream"),
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const text = await response.text();
    expect(text.endsWith("\r\n\r\n")).toBe(true);
    const chunks = sseFrames(text, "\r\n\r\n").map((frame) => JSON.parse(frame.data));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((chunk) => chunk.candidates[0].content.parts[0].text).join("")).toBe(
      `${simulatedAnswerPrefix}Hallo stream`,
    );
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
  });

  it("streams Gemini responses as one JSON array without alt=sse", async () => {
    const response = await post("/gemini/v1beta/models/gemini-test:streamGenerateContent", geminiBody("array"));
    const chunks = await response.json();
    expect(Array.isArray(chunks)).toBe(true);
    expect(
      chunks
        .map(
          (chunk: { candidates: { content: { parts: { text: string }[] } }[] }) =>
            chunk.candidates[0]?.content.parts[0]?.text,
        )
        .join(""),
    ).toBe(`${simulatedAnswerPrefix}array`);
  });

  it("counts Gemini tokens as the stated estimate of the contents", async () => {
    const response = await post("/gemini/v1beta/models/gemini-test:countTokens", geminiBody("12345678"));
    expect(await response.json()).toEqual({ totalTokens: 2 });
  });

  it("counts Gemini tokens of a whole generateContentRequest", async () => {
    const request = { model: "models/gemini-test", ...geminiBody("12345678") };
    const response = await post("/gemini/v1beta/models/gemini-test:countTokens", { generateContentRequest: request });
    expect(await response.json()).toEqual({ totalTokens: 2 });
  });

  it("answers an Anthropic message that echoes the last user text", async () => {
    const response = await post("/anthropic/v1/messages", anthropicBody("Hello Claude"));
    const message = await response.json();
    expect(message.type).toBe("message");
    expect(message.model).toBe("claude-test");
    // As the API sends it: no `citations` member on a text block without citations.
    expect(message.content).toEqual([{ type: "text", text: `${simulatedAnswerPrefix}Hello Claude` }]);
    expect(message.stop_reason).toBe("end_turn");
  });

  it("streams the Anthropic event sequence", async () => {
    const response = await post("/anthropic/v1/messages", anthropicBody("Hello stream", { stream: true }));
    const frames = sseFrames(await response.text());
    const names = frames.map((frame) => frame.event);
    const deltas = names.filter((name) => name === "content_block_delta").length;
    expect(deltas).toBeGreaterThan(1);
    expect(names).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      ...Array(deltas).fill("content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const data = frames.map((frame) => JSON.parse(frame.data));
    expect(data.every((event, index) => event.type === names[index])).toBe(true);
    const text = data
      .filter((event) => event.type === "content_block_delta")
      .map((event) => event.delta.text)
      .join("");
    expect(text).toBe(`${simulatedAnswerPrefix}Hello stream`);
    expect(data.find((event) => event.type === "message_delta").delta.stop_reason).toBe("end_turn");
  });

  it("counts Anthropic tokens as the stated estimate of system and messages", async () => {
    const response = await post("/anthropic/v1/messages/count_tokens", {
      model: "claude-test",
      system: "1234",
      messages: [{ role: "user", content: "5678" }],
    });
    expect(await response.json()).toEqual({ input_tokens: 2 });
  });
});

describe("the simulated provider is deterministic", () => {
  const requests: [string, string, unknown][] = [
    ["chat completions", "/openai/v1/chat/completions", chatBody("same")],
    ["responses", "/openai/v1/responses", { model: "gpt-test", input: "same", stream: true }],
    ["gemini", geminiGenerate, geminiBody("same")],
    ["anthropic", "/anthropic/v1/messages", anthropicBody("same", { stream: true })],
    [
      "a structured chat completion",
      "/openai/v1/chat/completions",
      chatBody("same", {
        response_format: { type: "json_schema", json_schema: { name: "s", schema: Object.values(schemas)[0] } },
      }),
    ],
  ];

  it.each(requests)("gives the same body for the same %s request", async (_name, path, body) => {
    const first = await (await post(path, body)).text();
    const second = await (await post(path, body)).text();
    expect(second).toBe(first);
  });

  it("derives different ids from different requests", async () => {
    const first = await (await post("/openai/v1/chat/completions", chatBody("one"))).json();
    const second = await (await post("/openai/v1/chat/completions", chatBody("two"))).json();
    expect(first.id).not.toBe(second.id);
  });
});

describe("the simulated provider answers structured-output requests with conforming JSON", () => {
  const prompts = Array.from({ length: 12 }, (_, index) => `prompt number ${index}`);

  it.each(Object.entries(schemas))("conforms to %s on OpenAI chat completions", async (_name, schema) => {
    for (const prompt of prompts) {
      const body = chatBody(prompt, { response_format: { type: "json_schema", json_schema: { name: "s", schema } } });
      const completion = await (await post("/openai/v1/chat/completions", body)).json();
      expect(conformsTo(schema, JSON.parse(completion.choices[0].message.content))).toBe(true);
    }
  });

  it.each(Object.entries(schemas))("conforms to %s on OpenAI Responses", async (_name, schema) => {
    for (const prompt of prompts) {
      const body = { model: "gpt-test", input: prompt, text: { format: { type: "json_schema", name: "s", schema } } };
      const response = await (await post("/openai/v1/responses", body)).json();
      expect(conformsTo(schema, JSON.parse(outputText(response)))).toBe(true);
    }
  });

  it.each(Object.entries(schemas))("conforms to %s on Gemini responseJsonSchema", async (_name, schema) => {
    for (const prompt of prompts) {
      const body = geminiBody(prompt, { responseMimeType: "application/json", responseJsonSchema: schema });
      const response = await (await post(geminiGenerate, body)).json();
      expect(conformsTo(schema, JSON.parse(response.candidates[0].content.parts[0].text))).toBe(true);
    }
  });

  it.each(Object.entries(schemas))("conforms to %s on Anthropic output_config", async (_name, schema) => {
    for (const prompt of prompts) {
      const body = anthropicBody(prompt, { output_config: { format: { type: "json_schema", schema } } });
      const message = await (await post("/anthropic/v1/messages", body)).json();
      expect(conformsTo(schema, JSON.parse(message.content[0].text))).toBe(true);
    }
  });

  it("conforms to a Gemini responseSchema in the OpenAPI subset once turned back into JSON Schema", async () => {
    const responseSchema = {
      type: "OBJECT",
      properties: {
        status: { type: "STRING", format: "enum", enum: ["open", "closed"] },
        items: { type: "ARRAY", minItems: "2", maxItems: "4", items: { type: "INTEGER" } },
        comment: { type: "STRING", nullable: true },
      },
      required: ["status", "items", "comment"],
      propertyOrdering: ["status", "items", "comment"],
    };
    const jsonSchema = {
      type: "object",
      properties: {
        status: { type: "string", enum: ["open", "closed"] },
        items: { type: "array", minItems: 2, maxItems: 4, items: { type: "integer" } },
        comment: { type: ["string", "null"] },
      },
      required: ["status", "items", "comment"],
    };
    for (const prompt of prompts) {
      const body = geminiBody(prompt, { responseMimeType: "application/json", responseSchema });
      const response = await (await post(geminiGenerate, body)).json();
      expect(conformsTo(jsonSchema, JSON.parse(response.candidates[0].content.parts[0].text))).toBe(true);
    }
  });

  it("answers Gemini's text/x.enum mode with one enum value as bare text", async () => {
    const body = geminiBody("pick", {
      responseMimeType: "text/x.enum",
      responseSchema: { type: "STRING", format: "enum", enum: ["red", "green"] },
    });
    const response = await (await post(geminiGenerate, body)).json();
    expect(["red", "green"]).toContain(response.candidates[0].content.parts[0].text);
  });

  it("answers JSON mode without a schema with a small labelled JSON object", async () => {
    const chat = await (
      await post("/openai/v1/chat/completions", chatBody("json please", { response_format: { type: "json_object" } }))
    ).json();
    expect(JSON.parse(chat.choices[0].message.content)).toEqual({ promptgate_simulated: true, echo: "json please" });
    const gemini = await (
      await post(geminiGenerate, geminiBody("json please", { responseMimeType: "application/json" }))
    ).json();
    expect(JSON.parse(gemini.candidates[0].content.parts[0].text)).toEqual({
      promptgate_simulated: true,
      echo: "json please",
    });
  });

  it("streams structured output whose concatenated deltas form the conforming document", async () => {
    const schema = Object.values(schemas)[0];
    const body = chatBody("stream json", {
      stream: true,
      response_format: { type: "json_schema", json_schema: { name: "s", schema } },
    });
    const chunks = sseFrames(await (await post("/openai/v1/chat/completions", body)).text())
      .slice(0, -1)
      .map((frame) => JSON.parse(frame.data));
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(conformsTo(schema, JSON.parse(text))).toBe(true);
  });
});

describe("the simulated provider refuses bad input in each provider's native shape", () => {
  it.each([["/openai/v1/chat/completions"], ["/openai/v1/responses"]])(
    "answers unparseable JSON on %s with OpenAI's native 400",
    async (path) => {
      const response = await post(path, "{not json");
      expect(response.status).toBe(400);
      expect(response.headers.get("x-promptgate-simulated")).toBe("true");
      const body = await response.json();
      expect(body).toEqual({
        error: { message: expect.any(String), type: "invalid_request_error", param: null, code: null },
      });
    },
  );

  it("names the missing parameter of an OpenAI request", async () => {
    const response = await post("/openai/v1/chat/completions", { model: "gpt-test" });
    expect(response.status).toBe(400);
    const { error } = await response.json();
    expect(error).toMatchObject({
      type: "invalid_request_error",
      param: "messages",
      code: "missing_required_parameter",
    });
  });

  it.each([
    [geminiGenerate],
    ["/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse"],
    ["/gemini/v1beta/models/gemini-test:countTokens"],
  ])("answers unparseable JSON on %s with Gemini's native 400", async (path) => {
    const response = await post(path, "[1,");
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: 400, status: "INVALID_ARGUMENT", message: expect.any(String) },
    });
  });

  it("refuses a Gemini request without contents", async () => {
    const response = await post(geminiGenerate, { generationConfig: {} });
    expect(response.status).toBe(400);
    expect((await response.json()).error.status).toBe("INVALID_ARGUMENT");
  });

  it("refuses a Gemini response schema without the JSON MIME type", async () => {
    const response = await post(geminiGenerate, geminiBody("x", { responseJsonSchema: { type: "object" } }));
    expect(response.status).toBe(400);
    expect((await response.json()).error.status).toBe("INVALID_ARGUMENT");
  });

  it.each([["/anthropic/v1/messages"], ["/anthropic/v1/messages/count_tokens"]])(
    "answers unparseable JSON on %s with Anthropic's native 400",
    async (path) => {
      const response = await post(path, "nope");
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        type: "error",
        error: { type: "invalid_request_error", message: expect.any(String) },
        request_id: expect.stringMatching(/^req_01/),
      });
    },
  );

  it("refuses an Anthropic message without max_tokens", async () => {
    const response = await post("/anthropic/v1/messages", { model: "claude-test", messages: [] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("max_tokens");
  });

  it.each([
    ["/openai/v1/embeddings", { error: { type: "invalid_request_error" } }],
    ["/gemini/v1beta/models/gemini-test:embedContent", { error: { code: 404, status: "NOT_FOUND" } }],
    ["/gemini/v2/models/gemini-test:generateContent", { error: { code: 404, status: "NOT_FOUND" } }],
    ["/anthropic/v1/complete", { type: "error", error: { type: "not_found_error" } }],
    ["/elsewhere", { error: { message: expect.any(String) } }],
  ])("answers the unknown route %s with a native 404", async (path, shape) => {
    const response = await post(path, {});
    expect(response.status).toBe(404);
    expect(response.headers.get("x-promptgate-simulated")).toBe("true");
    expect(await response.json()).toMatchObject(shape);
  });
});

describe("the simulated provider never throws out of fetch", () => {
  it("answers a body that fails while being read with the provider's native 500", async () => {
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("connection reset"));
      },
    });
    const request = new Request(`${simulatedOrigin}/anthropic/v1/messages`, {
      method: "POST",
      body: failing,
      duplex: "half",
    } as RequestInit);
    const response = await sim.fetch(request);
    expect(response.status).toBe(500);
    expect(response.headers.get("x-promptgate-simulated")).toBe("true");
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "api_error", message: expect.any(String) },
      request_id: expect.stringMatching(/^req_01/),
    });
  });
});

describe("the official SDKs talk to the simulated provider", () => {
  const openai = new OpenAI({
    apiKey: "x",
    baseURL: `${simulatedOrigin}/openai/v1`,
    fetch: routeToSimulator,
    maxRetries: 0,
  });
  const gemini = new GoogleGenAI({
    apiKey: "x",
    httpOptions: { baseUrl: `${simulatedOrigin}/gemini`, fetch: routeToSimulator },
  });
  const anthropic = new Anthropic({
    apiKey: "x",
    baseURL: `${simulatedOrigin}/anthropic`,
    fetch: routeToSimulator,
    maxRetries: 0,
  });
  const schema = Object.values(schemas)[0] ?? {};

  it("lets the openai SDK create a chat completion", async () => {
    const completion = await openai.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "Hi from openai" }],
    });
    expect(completion.choices[0]?.message.content).toBe(`${simulatedAnswerPrefix}Hi from openai`);
  });

  it("lets the openai SDK stream a chat completion with usage", async () => {
    const stream = await openai.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "Hi stream" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let totalTokens = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      totalTokens = chunk.usage?.total_tokens ?? totalTokens;
    }
    expect(text).toBe(`${simulatedAnswerPrefix}Hi stream`);
    expect(totalTokens).toBeGreaterThan(0);
  });

  it("lets the openai SDK create and stream Responses", async () => {
    const created = await openai.responses.create({ model: "gpt-test", input: "Hi responses" });
    expect(created.output_text).toBe(`${simulatedAnswerPrefix}Hi responses`);
    const stream = openai.responses.stream({ model: "gpt-test", input: "Hi responses" });
    let deltas = "";
    stream.on("response.output_text.delta", (event) => {
      deltas += event.delta;
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(`${simulatedAnswerPrefix}Hi responses`);
    expect(deltas).toBe(final.output_text);
  });

  it("lets the openai SDK get a structured answer that conforms to its schema", async () => {
    const completion = await openai.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "structured" }],
      response_format: { type: "json_schema", json_schema: { name: "findings", strict: true, schema } },
    });
    expect(conformsTo(schema, JSON.parse(completion.choices[0]?.message.content ?? ""))).toBe(true);
  });

  it("raises the openai SDK's BadRequestError for a refused request", async () => {
    const request = openai.chat.completions.create({
      model: "gpt-test",
    } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    await expect(request).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("lets the @google/genai SDK generate, stream and count tokens", async () => {
    const generated = await gemini.models.generateContent({ model: "gemini-test", contents: "Hi from genai" });
    expect(generated.text).toBe(`${simulatedAnswerPrefix}Hi from genai`);
    let streamed = "";
    for await (const chunk of await gemini.models.generateContentStream({
      model: "gemini-test",
      contents: "Hi stream",
    })) {
      streamed += chunk.text ?? "";
    }
    expect(streamed).toBe(`${simulatedAnswerPrefix}Hi stream`);
    const counted = await gemini.models.countTokens({ model: "gemini-test", contents: "12345678" });
    expect(counted.totalTokens).toBe(2);
  });

  it("lets the @google/genai SDK get structured answers for both schema fields", async () => {
    const viaJsonSchema = await gemini.models.generateContent({
      model: "gemini-test",
      contents: "structured",
      config: { responseMimeType: "application/json", responseJsonSchema: schema },
    });
    expect(conformsTo(schema, JSON.parse(viaJsonSchema.text ?? ""))).toBe(true);
    const viaResponseSchema = await gemini.models.generateContent({
      model: "gemini-test",
      contents: "structured",
      config: {
        responseMimeType: "application/json",
        responseSchema: { type: "object", properties: { total: { type: "number" } }, required: ["total"] },
      },
    });
    expect(JSON.parse(viaResponseSchema.text ?? "")).toEqual({ total: expect.any(Number) });
  });

  it("lets the @anthropic-ai/sdk create, stream and count a message", async () => {
    const message = await anthropic.messages.create({
      model: "claude-test",
      max_tokens: 64,
      messages: [{ role: "user", content: "Hi from anthropic" }],
    });
    expect(message.content[0]).toMatchObject({ type: "text", text: `${simulatedAnswerPrefix}Hi from anthropic` });
    const final = await anthropic.messages
      .stream({ model: "claude-test", max_tokens: 64, messages: [{ role: "user", content: "Hi stream" }] })
      .finalMessage();
    expect(final.content[0]).toMatchObject({ type: "text", text: `${simulatedAnswerPrefix}Hi stream` });
    expect(final.stop_reason).toBe("end_turn");
    const counted = await anthropic.messages.countTokens({
      model: "claude-test",
      messages: [{ role: "user", content: "12345678" }],
    });
    expect(counted.input_tokens).toBe(2);
  });

  it("lets the @anthropic-ai/sdk get a structured answer that conforms to its schema", async () => {
    const message = await anthropic.messages.create({
      model: "claude-test",
      max_tokens: 512,
      messages: [{ role: "user", content: "structured" }],
      output_config: { format: { type: "json_schema", schema } },
    });
    const block = message.content[0];
    expect(block?.type).toBe("text");
    expect(conformsTo(schema, JSON.parse(block?.type === "text" ? block.text : ""))).toBe(true);
  });

  it("raises the @anthropic-ai/sdk's BadRequestError for a refused request", async () => {
    const request = anthropic.messages.create({ model: "claude-test", max_tokens: 0, messages: [] });
    await expect(request).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });
});

/** The text of a Responses object's output messages, as the SDK's `output_text` joins it. */
function outputText(response: { output: { content?: { type: string; text?: string }[] }[] }): string {
  return response.output
    .flatMap((item) => item.content ?? [])
    .filter((part) => part.type === "output_text")
    .map((part) => part.text)
    .join("");
}
