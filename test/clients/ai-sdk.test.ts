import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, generateText, type LanguageModel, Output, RetryError, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type ClientSetup, clientSetups, type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { answerJson, nativeAnswers, nativeFailures } from "../support/native-answers.js";

/**
 * The Vercel AI SDK (ai 6 with @ai-sdk/openai, @ai-sdk/google, @ai-sdk/anthropic) through the
 * gateway, with only its base URL changed: text, streamed text, structured output and a tool round
 * trip for each model kind, on the embedded simulated provider and through a recording fake
 * upstream; and how a rejection, an invalid answer and a rate limit reach the client.
 */

/** What a provider's native request body says, read the same way for every wire format. */
interface NativeRequest {
  /** The path without the query. */
  path: string;
  model: unknown;
  stream: boolean;
  toolNames: unknown[];
  /** The response schema, as the provider received it (for Gemini, the policy's projection). */
  schema: unknown;
}

/** One AI SDK model kind: its provider package, and its provider's wire format. */
interface ModelKind {
  name: string;
  /** The surface's base path below the gateway's origin (and a policy prefix). */
  basePath: string;
  modelId: string;
  create(baseURL: string, fetch: typeof globalThis.fetch): LanguageModel;
  /** The upstream paths of a whole and of a streamed call. */
  paths: { whole: string; streamed: string };
  read(body: unknown, path: string): NativeRequest;
  /** A native success answer whose text is `text`. */
  success(text: string): unknown;
  /** The provider's native 429 body for a per-minute rate limit. */
  rateLimited: unknown;
  /** Whether the gateway forwards the client's body unchanged (Gemini gets a projected schema). */
  bodyUnchanged: boolean;
}

/** The member at `keys` of a parsed JSON value, or undefined. */
function at(value: unknown, ...keys: (string | number)[]): unknown {
  let current = value;
  for (const key of keys) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** `read(item)` of each item of a JSON array (none when it is not one). */
function each(list: unknown, read: (item: unknown) => unknown): unknown[] {
  return Array.isArray(list) ? list.map(read) : [];
}

const kinds: ModelKind[] = [
  {
    name: "openai responses",
    basePath: "/openai/v1",
    modelId: "gpt-4.1-mini",
    create: (baseURL, fetch) => createOpenAI({ baseURL, apiKey: "simulated", fetch }).responses("gpt-4.1-mini"),
    paths: { whole: "/openai/v1/responses", streamed: "/openai/v1/responses" },
    read: (body, path) => ({
      path,
      model: at(body, "model"),
      stream: at(body, "stream") === true,
      toolNames: each(at(body, "tools"), (item) => at(item, "name")),
      schema: at(body, "text", "format", "schema"),
    }),
    success: nativeAnswers.responses,
    rateLimited: nativeFailures.openai.rateLimit.body,
    bodyUnchanged: true,
  },
  {
    name: "openai chat",
    basePath: "/openai/v1",
    modelId: "gpt-4.1-mini",
    create: (baseURL, fetch) => createOpenAI({ baseURL, apiKey: "simulated", fetch }).chat("gpt-4.1-mini"),
    paths: { whole: "/openai/v1/chat/completions", streamed: "/openai/v1/chat/completions" },
    read: (body, path) => ({
      path,
      model: at(body, "model"),
      stream: at(body, "stream") === true,
      toolNames: each(at(body, "tools"), (item) => at(item, "function", "name")),
      schema: at(body, "response_format", "json_schema", "schema"),
    }),
    success: nativeAnswers.chat,
    rateLimited: nativeFailures.openai.rateLimit.body,
    bodyUnchanged: true,
  },
  {
    name: "google",
    basePath: "/gemini/v1beta",
    modelId: "gemini-2.5-flash",
    create: (baseURL, fetch) => createGoogleGenerativeAI({ baseURL, apiKey: "simulated", fetch })("gemini-2.5-flash"),
    paths: {
      whole: "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
      streamed: "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    },
    read: (body, path) => ({
      path,
      model: /\/models\/([^:/]+):/.exec(path)?.[1],
      stream: path.endsWith(":streamGenerateContent"),
      toolNames: each(at(body, "tools"), (item) => each(at(item, "functionDeclarations"), (d) => at(d, "name"))).flat(),
      schema: at(body, "generationConfig", "responseJsonSchema") ?? at(body, "generationConfig", "responseSchema"),
    }),
    success: nativeAnswers.gemini,
    rateLimited: nativeFailures.gemini.rateLimit.body,
    bodyUnchanged: false,
  },
  {
    name: "anthropic",
    basePath: "/anthropic/v1",
    modelId: "claude-sonnet-4-5",
    create: (baseURL, fetch) => createAnthropic({ baseURL, apiKey: "simulated", fetch })("claude-sonnet-4-5"),
    paths: { whole: "/anthropic/v1/messages", streamed: "/anthropic/v1/messages" },
    read: (body, path) => ({
      path,
      model: at(body, "model"),
      stream: at(body, "stream") === true,
      toolNames: each(at(body, "tools"), (item) => at(item, "name")),
      schema: at(body, "output_config", "format", "schema"),
    }),
    success: nativeAnswers.anthropic,
    rateLimited: nativeFailures.anthropic.rateLimit.body,
    bodyUnchanged: true,
  },
];

const weather = z.object({
  city: z.string(),
  temperature: z.number(),
  conditions: z.enum(["sunny", "cloudy", "rain"]),
});
const weatherQuery = z.object({ city: z.string() });
const forecast = "sunny, 21 degrees";

let harness: GatewayUnderTest;
/** The body of each request the client sent, as its provider package handed it to fetch. */
let sent: string[];

beforeEach(() => {
  sent = [];
});

/** The kind's model at the gateway, under `policy` when given; its fetch records what it sends. */
function modelOf(kind: ModelKind, policy?: string): LanguageModel {
  const prefix = policy === undefined ? "" : `/policies/${policy}`;
  return kind.create(`${harness.gateway.url}${prefix}${kind.basePath}`, async (input, init) => {
    sent.push(typeof init?.body === "string" ? init.body : "");
    return fetch(input, init);
  });
}

/** What a call should have sent to the provider. */
interface ExpectedCall {
  /** How many requests the client sent (and the provider received); 1 unless set. */
  calls?: number;
  stream?: boolean;
  prompt: string;
  /** The names of the tools declared; none unless set. */
  tools?: string[];
  /** The response schema, whose properties the provider must receive (projected or not); none unless set. */
  schema?: z.ZodObject;
  /** Text the last request must carry, e.g. a tool's result. */
  lastCarries?: string;
}

/**
 * That the client's requests reached the provider as it sent them: in the simulated setup the
 * embedded provider answers and nothing reaches the fake upstream; through the fake upstream,
 * each request arrives as the kind's native call, with the client's body (Gemini's schema aside).
 */
function expectForwarded(setup: ClientSetup, kind: ModelKind, expected: ExpectedCall): void {
  const calls = expected.calls ?? 1;
  expect(sent).toHaveLength(calls);
  if (!setup.forwards) {
    expect(harness.upstream.received).toHaveLength(0);
    return;
  }
  const received = harness.upstream.received;
  expect(received).toHaveLength(calls);
  received.forEach((raw, index) => {
    const upstreamBody: unknown = JSON.parse(raw.body);
    const request = kind.read(upstreamBody, raw.url.split("?")[0] ?? "");
    expect(request).toMatchObject({
      path: expected.stream === true ? kind.paths.streamed : kind.paths.whole,
      model: kind.modelId,
      stream: expected.stream === true,
      toolNames: expected.tools ?? [],
    });
    expect(raw.body).toContain(expected.prompt);
    if (expected.schema === undefined) expect(request.schema).toBeUndefined();
    else {
      const properties = Object.keys(Object(at(request.schema, "properties")));
      expect(properties).toEqual(expect.arrayContaining(Object.keys(expected.schema.shape)));
    }
    const clientBody: unknown = JSON.parse(sent[index] ?? "null");
    if (kind.bodyUnchanged) expect(upstreamBody).toEqual(clientBody);
    else expect(withoutSchema(upstreamBody)).toEqual(withoutSchema(clientBody));
  });
  if (expected.lastCarries !== undefined) expect(received.at(-1)?.body).toContain(expected.lastCarries);
}

/** A Gemini body without its response schema field, which the policy's projection replaces. */
function withoutSchema(body: unknown): unknown {
  const config = at(body, "generationConfig");
  if (typeof config !== "object" || config === null) return body;
  const { responseSchema: _openApi, responseJsonSchema: _json, ...rest } = config as Record<string, unknown>;
  return { ...(body as Record<string, unknown>), generationConfig: rest };
}

/** The lookup_weather tool; its execute records each input. */
function weatherTool(inputs: unknown[]) {
  return tool({
    description: "Looks up the current weather of a city.",
    inputSchema: weatherQuery,
    execute: async (input) => {
      inputs.push(input);
      return { city: input.city, forecast };
    },
  });
}

describe.each(clientSetups)("the AI SDK on the $name setup", (setup) => {
  beforeAll(async () => {
    harness = await startGatewayUnderTest(setup.environment);
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.upstream.received.length = 0;
    harness.upstream.answerWith(undefined);
  });

  describe.each(kinds)("$name", (kind) => {
    it("generateText gets text back", async () => {
      const prompt = "Say hello to the gateway.";
      const result = await generateText({ model: modelOf(kind), prompt, maxRetries: 0 });
      expect(result.text).not.toBe("");
      expect(result.finishReason).toBe("stop");
      expectForwarded(setup, kind, { prompt });
    });

    it("streamText streams the text to its end", async () => {
      const prompt = "Stream a greeting, please.";
      const errors: unknown[] = [];
      const result = streamText({
        model: modelOf(kind),
        prompt,
        maxRetries: 0,
        onError: ({ error }) => void errors.push(error),
      });
      let streamed = "";
      for await (const delta of result.textStream) streamed += delta;
      expect(errors).toEqual([]);
      expect(streamed).not.toBe("");
      expect(streamed).toBe(await result.text);
      expect(await result.finishReason).toBe("stop");
      expectForwarded(setup, kind, { prompt, stream: true });
    });

    it("Output.object gets an object matching the zod schema", async () => {
      const prompt = "Report the weather in Berlin.";
      const result = await generateText({
        model: modelOf(kind),
        prompt,
        output: Output.object({ schema: weather }),
        maxRetries: 0,
      });
      expect(weather.parse(result.output)).toEqual(result.output);
      expectForwarded(setup, kind, { prompt, schema: weather });
    });

    it("runs one tool round trip: a tool call, its result, then text", async () => {
      const prompt = "Please call lookup_weather for Berlin";
      const inputs: unknown[] = [];
      const result = await generateText({
        model: modelOf(kind),
        prompt,
        tools: { lookup_weather: weatherTool(inputs) },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      expect(inputs).toHaveLength(1);
      expect(weatherQuery.safeParse(inputs[0]).success).toBe(true);
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0]?.toolCalls.map((call) => call.toolName)).toEqual(["lookup_weather"]);
      expect(result.text).not.toBe("");
      expectForwarded(setup, kind, { prompt, calls: 2, tools: ["lookup_weather"], lastCarries: forecast });
    });
  });
});

/** The error `promise` rejects with. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("the call succeeded"),
    (error: unknown) => error,
  );
}

/** `error` as the APICallError it must be. */
function asAPICallError(error: unknown): APICallError {
  expect(APICallError.isInstance(error), String(error)).toBe(true);
  return error as APICallError;
}

/** The gateway's `promptgate` member of an error body; every surface's native shape has it at `error.promptgate`. */
function promptgateOf(error: APICallError): unknown {
  return at(JSON.parse(error.responseBody ?? "null"), "error", "promptgate");
}

/** Answers `response` with `body` as JSON, with `status` and `headers`. */

describe("what an AI SDK client sees of failures, through the fake upstream", () => {
  beforeAll(async () => {
    harness = await startGatewayUnderTest();
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.upstream.received.length = 0;
    harness.upstream.answerWith(undefined);
  });

  describe.each(kinds)("$name", (kind) => {
    /** Answers the next `failures` calls with the provider's native 429 (retry-after: 0), then lets the simulator answer. */
    function rateLimitNext(failures: number) {
      let left = failures;
      harness.upstream.answerWith((_request, response) => {
        left -= 1;
        if (left === 0) harness.upstream.answerWith(undefined);
        answerJson(response, 429, kind.rateLimited, { "retry-after": "0" });
      });
    }

    it("an oversize prompt is an APICallError 400 INVESTIGATION_PROMPT_LIMIT, sent once and never upstream", async () => {
      const error = asAPICallError(
        await rejectionOf(
          generateText({ model: modelOf(kind, "investigation.bounded"), prompt: "x".repeat(30_000), maxRetries: 2 }),
        ),
      );
      expect(error.statusCode).toBe(400);
      expect(error.isRetryable).toBe(false);
      expect(error.responseBody).toContain("INVESTIGATION_PROMPT_LIMIT");
      expect(promptgateOf(error)).toMatchObject({
        code: "INVESTIGATION_PROMPT_LIMIT",
        retryable: false,
        prompt_size: { message_chars: 30_000, limit_chars: 20_000 },
      });
      expect(sent).toHaveLength(1);
      expect(harness.upstream.received).toHaveLength(0);
    });

    it("an answer failing the schema is an APICallError 422 RESPONSE_SCHEMA_INVALID with diagnostics, sent once", async () => {
      harness.upstream.answerWith((_request, response) =>
        answerJson(response, 200, kind.success(JSON.stringify({ city: 12, conditions: "snow" }))),
      );
      const error = asAPICallError(
        await rejectionOf(
          generateText({
            model: modelOf(kind, "investigation.bounded"),
            prompt: "Report the weather in Berlin.",
            output: Output.object({ schema: weather }),
            maxRetries: 2,
          }),
        ),
      );
      expect(error.statusCode).toBe(422);
      expect(error.isRetryable).toBe(false);
      expect(error.responseBody).toContain("RESPONSE_SCHEMA_INVALID");
      expect(promptgateOf(error)).toMatchObject({
        code: "RESPONSE_SCHEMA_INVALID",
        retryable: false,
        diagnostics: { valid: false, errors: expect.arrayContaining([expect.anything()]) },
      });
      expect(sent).toHaveLength(1);
      expect(harness.upstream.received).toHaveLength(1);
    });

    it("a rate limit on every attempt is retried, then thrown as RetryError whose last error is a retryable 429", async () => {
      rateLimitNext(Number.POSITIVE_INFINITY);
      const error = await rejectionOf(
        generateText({ model: modelOf(kind), prompt: "Say hello to the gateway.", maxRetries: 1 }),
      );
      expect(RetryError.isInstance(error), String(error)).toBe(true);
      const retryError = error as RetryError;
      expect(retryError.reason).toBe("maxRetriesExceeded");
      const lastError = asAPICallError(retryError.lastError);
      expect(lastError.statusCode).toBe(429);
      expect(lastError.isRetryable).toBe(true);
      expect(promptgateOf(lastError)).toMatchObject({ code: "rate_limit", retryable: true });
      expect(sent).toHaveLength(2);
      expect(harness.upstream.received).toHaveLength(2);
    });

    it("a rate limit on the first attempt only is retried and the call succeeds", async () => {
      rateLimitNext(1);
      const result = await generateText({ model: modelOf(kind), prompt: "Say hello to the gateway.", maxRetries: 1 });
      expect(result.text).not.toBe("");
      expect(sent).toHaveLength(2);
      expect(harness.upstream.received).toHaveLength(2);
    });
  });
});
