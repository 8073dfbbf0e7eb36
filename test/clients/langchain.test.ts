import type { ServerResponse } from "node:http";
import { ChatAnthropic } from "@langchain/anthropic";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { retryOnlyRetryable } from "../../src/clients/langchain.js";
import type { ReceivedRequest } from "../support/fake-upstream.js";
import { clientSetups, type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { nativeAnswers, nativeFailures } from "../support/native-answers.js";

/*
 * LangChain's chat models through the gateway, each changing only its base URL.
 *
 * Retries: every LangChain chat model sets its SDK's own `maxRetries` to 0 and retries in
 * @langchain/core's AsyncCaller instead (p-retry: 1-2 s, then doubling), so `x-should-retry` is
 * never read. Its default handler (core 1.4.0, dist/utils/async_caller.js) refuses to retry the
 * statuses 400, 401, 402, 403, 404, 405, 406, 407, 409 and 413 and an error its integration
 * stamped not retryable; a 429 is retried only when a `retry-after` header, or "retry after N s"
 * in the message, asks for at most 60 s, and never with an `insufficient_quota` code or a
 * quota-sounding message (a 429 without either is thrown at once as RateLimitCapacityError).
 * Every other status, 422 included, is retried. ChatGoogleGenerativeAI's error
 * (GoogleGenerativeAIFetchError) carries no headers, so its 429s are never retried as sent today.
 *
 * Structured output: the response schema avoids `enum`, `const` and bounds, because
 * ChatAnthropic's method "jsonSchema" passes the schema through @anthropic-ai/sdk 0.122's
 * transformJSONSchema, which moves every keyword it does not keep (enum among them) into the
 * description, so neither the provider nor the gateway's validation ever sees them.
 */

/** What a client case builds its model with: the gateway, an optional pinned policy, retries, a fetch. */
interface ModelOptions {
  gatewayUrl: string;
  policy?: string;
  maxRetries: number;
  /** LangChain's retry decision; its own when unset. */
  onFailedAttempt?: (error: unknown) => void;
  /** Records each request the client sends, where the client takes a fetch. */
  fetch: typeof fetch;
}

/** What a forwarded request carried, read from the provider's native body. */
interface Forwarded {
  model: string;
  userTexts: string[];
  toolNames: string[];
  toolResults: number;
  schema: unknown;
}

type Json = Record<string, unknown>;

/** A provider's answer as the fake upstream sends it. */
interface NativeAnswer {
  status: number;
  body: Json;
}

/** One LangChain chat model class, with what a test needs to know about its provider's wire format. */
interface ClientCase {
  name: string;
  model: string;
  build(options: ModelOptions): BaseChatModel;
  /** Whether `build` hands `fetch` to the client (else requests are counted from the gateway's call log). */
  takesFetch: boolean;
  /** The upstream path of a generate call, plain and streamed. */
  path: { invoke: string; stream: string };
  read(body: Json, url: string): Forwarded;
  /** A native successful answer whose text is `text`. */
  answer(text: string): Json;
  /** The provider's native failures: a per-minute rate limit (retryable) and an exhausted quota (not). */
  failures: { rateLimit: NativeAnswer; quota: NativeAnswer };
  /** The client's error class for a status, and the gateway's code where the error exposes it. */
  errorView(error: unknown): { className: string; status: unknown; code: unknown };
  errorClass(status: number): string;
}

const base = ({ gatewayUrl, policy }: ModelOptions, surface: string) =>
  `${gatewayUrl}${policy === undefined ? "" : `/policies/${policy}`}/${surface}`;

const textsOf = (content: unknown, textType: string): string[] =>
  typeof content === "string"
    ? [content]
    : Array.isArray(content)
      ? content.filter((part: Json) => part.type === textType).map((part: Json) => String(part.text))
      : [];

const byRole = (items: unknown, role: string): Json[] =>
  Array.isArray(items) ? (items as Json[]).filter((item) => item.role === role) : [];

const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

const field = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((at, key) => (at !== null && typeof at === "object" ? (at as Json)[key] : undefined), value);

function sdkErrorView(error: unknown) {
  return {
    className: (error as Error).constructor.name,
    status: field(error, "status"),
    code: field(error, "code") ?? field(error, "error", "error", "code"),
  };
}

const sdkErrorClass = (status: number) =>
  ({ 400: "BadRequestError", 422: "UnprocessableEntityError", 429: "RateLimitError" })[status] ?? "APIError";

const openAIChat: ClientCase = {
  name: "ChatOpenAI (chat completions)",
  model: "gpt-4.1-mini",
  takesFetch: true,
  build: (options) =>
    new ChatOpenAI({
      model: "gpt-4.1-mini",
      apiKey: "simulated",
      maxRetries: options.maxRetries,
      onFailedAttempt: options.onFailedAttempt,
      configuration: { baseURL: base(options, "openai/v1"), fetch: options.fetch },
    }),
  path: { invoke: "/openai/v1/chat/completions", stream: "/openai/v1/chat/completions" },
  read: (body) => ({
    model: String(body.model),
    userTexts: byRole(body.messages, "user").flatMap((message) => textsOf(message.content, "text")),
    toolNames: list(body.tools).map((entry) => String(field(entry, "function", "name"))),
    toolResults: byRole(body.messages, "tool").length,
    schema: field(body, "response_format", "json_schema", "schema"),
  }),
  answer: nativeAnswers.chat,
  failures: nativeFailures.openai,
  errorView: sdkErrorView,
  errorClass: sdkErrorClass,
};

const openAIResponses: ClientCase = {
  ...openAIChat,
  name: "ChatOpenAI (Responses API)",
  build: (options) =>
    new ChatOpenAI({
      model: "gpt-4.1-mini",
      apiKey: "simulated",
      useResponsesApi: true,
      maxRetries: options.maxRetries,
      onFailedAttempt: options.onFailedAttempt,
      configuration: { baseURL: base(options, "openai/v1"), fetch: options.fetch },
    }),
  path: { invoke: "/openai/v1/responses", stream: "/openai/v1/responses" },
  read: (body) => ({
    model: String(body.model),
    userTexts:
      typeof body.input === "string"
        ? [body.input]
        : byRole(body.input, "user").flatMap((item) => textsOf(item.content, "input_text")),
    toolNames: list(body.tools).map((entry) => String(entry.name)),
    toolResults: list(body.input).filter((item) => item.type === "function_call_output").length,
    schema: field(body, "text", "format", "schema"),
  }),
  answer: nativeAnswers.responses,
};

const gemini: ClientCase = {
  name: "ChatGoogleGenerativeAI",
  model: "gemini-2.5-flash",
  // @google/generative-ai, under ChatGoogleGenerativeAI, calls the global fetch and takes none.
  takesFetch: false,
  build: (options) =>
    new ChatGoogleGenerativeAI({
      model: "gemini-2.5-flash",
      apiKey: "simulated",
      maxRetries: options.maxRetries,
      onFailedAttempt: options.onFailedAttempt,
      // The SDK appends `/v1beta/models/{model}:generateContent` (apiVersion defaults to v1beta).
      baseUrl: base(options, "gemini"),
    }),
  path: {
    invoke: "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
    stream: "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
  },
  read: (body, url) => ({
    model: /\/models\/([^:]+):/.exec(url)?.[1] ?? "",
    userTexts: byRole(body.contents, "user").flatMap((content) =>
      list(content.parts).flatMap((part) => (typeof part.text === "string" ? [part.text] : [])),
    ),
    toolNames: list(body.tools).flatMap((entry) =>
      list(entry.functionDeclarations).map((declaration) => String(declaration.name)),
    ),
    toolResults: list(body.contents)
      .flatMap((content) => list(content.parts))
      .filter((part) => part.functionResponse !== undefined).length,
    // The gateway may project the schema (and move it to responseJsonSchema): presence only.
    schema: field(body, "generationConfig", "responseSchema") ?? field(body, "generationConfig", "responseJsonSchema"),
  }),
  answer: nativeAnswers.gemini,
  // RESOURCE_EXHAUSTED is rate_limit for a per-minute quota (with a RetryInfo), quota for a daily one.
  failures: nativeFailures.gemini,
  // GoogleGenerativeAIFetchError: `status`, and the gateway's code as an ErrorInfo reason in `errorDetails`.
  errorView: (error) => ({
    className: (error as Error).constructor.name,
    status: field(error, "status"),
    code: list(field(error, "errorDetails")).find((detail) => detail.domain === "promptgate")?.reason,
  }),
  errorClass: () => "GoogleGenerativeAIFetchError",
};

const anthropic: ClientCase = {
  name: "ChatAnthropic",
  model: "claude-sonnet-4-5",
  takesFetch: true,
  build: (options) =>
    new ChatAnthropic({
      model: "claude-sonnet-4-5",
      apiKey: "simulated",
      maxRetries: options.maxRetries,
      onFailedAttempt: options.onFailedAttempt,
      // The SDK appends /v1/messages.
      anthropicApiUrl: base(options, "anthropic"),
      clientOptions: { fetch: options.fetch },
    }),
  path: { invoke: "/anthropic/v1/messages", stream: "/anthropic/v1/messages" },
  read: (body) => ({
    model: String(body.model),
    userTexts: byRole(body.messages, "user").flatMap((message) => textsOf(message.content, "text")),
    toolNames: list(body.tools).map((entry) => String(entry.name)),
    toolResults: byRole(body.messages, "user")
      .flatMap((message) => list(message.content))
      .filter((block) => block.type === "tool_result").length,
    schema: field(body, "output_config", "format", "schema"),
  }),
  answer: nativeAnswers.anthropic,
  failures: nativeFailures.anthropic,
  // @langchain/anthropic bundles its own @anthropic-ai/sdk (0.122), so its classes are matched by name.
  errorView: sdkErrorView,
  errorClass: sdkErrorClass,
};

const clients: ClientCase[] = [openAIChat, openAIResponses, gemini, anthropic];

const weather = z.object({
  city: z.string(),
  temperature_c: z.number(),
  windy: z.boolean(),
  conditions: z.array(z.string()),
});

const lookupArgs = z.object({ city: z.string() });
const lookupWeather = tool(async ({ city }) => `12°C and cloudy in ${city}`, {
  name: "lookup_weather",
  description: "Looks up the current weather in a city.",
  schema: lookupArgs,
});

/** A gateway per setup, a record of what each client sent, and the helpers that read both. */
function useGateway(environment: Record<string, string>) {
  const state = { harness: undefined as unknown as GatewayUnderTest, sent: [] as string[] };
  beforeAll(async () => {
    state.harness = await startGatewayUnderTest(environment);
  });
  afterAll(() => state.harness.close());
  beforeEach(() => {
    state.harness.upstream.received.length = 0;
    state.harness.upstream.answerWith(undefined);
    state.harness.logs.length = 0;
    state.sent = [];
  });
  const recordingFetch: typeof fetch = (input, init) => {
    state.sent.push(String(input instanceof Request ? input.url : input));
    return fetch(input, init);
  };
  return {
    get harness() {
      return state.harness;
    },
    build(
      client: ClientCase,
      options: { policy?: string; maxRetries?: number; onFailedAttempt?: (error: unknown) => void } = {},
    ): BaseChatModel {
      return client.build({ gatewayUrl: state.harness.gateway.url, maxRetries: 0, ...options, fetch: recordingFetch });
    },
    /** How many requests the client sent the gateway: its fetch's record, else the gateway's call log lines. */
    requestsSent(client: ClientCase): number {
      return client.takesFetch ? state.sent.length : state.harness.logs.length;
    },
    forwarded(client: ClientCase): (Forwarded & { url: string })[] {
      return state.harness.upstream.received.map((request: ReceivedRequest) => ({
        url: request.url,
        ...client.read(JSON.parse(request.body) as Json, request.url),
      }));
    },
  };
}

/** Answers every upstream request with `answer` and `headers`; only the first `times` when given. */
function answerNatively(
  gateway: ReturnType<typeof useGateway>,
  { status, body }: NativeAnswer,
  options: { headers?: Record<string, string>; times?: number } = {},
): void {
  let left = options.times ?? Number.POSITIVE_INFINITY;
  gateway.harness.upstream.answerWith((_request, response: ServerResponse) => {
    left -= 1;
    if (left <= 0) gateway.harness.upstream.answerWith(undefined);
    response.writeHead(status, { "content-type": "application/json", ...options.headers });
    response.end(JSON.stringify(body));
  });
}

/** The error `promise` rejects with; fails the test when it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

describe.each(clientSetups)("LangChain through the gateway ($name)", ({ environment, forwards }) => {
  const gateway = useGateway(environment);

  /**
   * The client sent one request per expected one, none retried; in the fake-upstream setup each
   * reached the provider carrying `expected`, in the simulated one none left the gateway.
   */
  function expectForwarded(client: ClientCase, path: string, expected: Partial<Forwarded>[]): void {
    expect(gateway.requestsSent(client)).toBe(expected.length);
    const forwarded = gateway.forwarded(client);
    if (!forwards) {
      expect(forwarded).toEqual([]);
      return;
    }
    expect(forwarded).toHaveLength(expected.length);
    expected.forEach((fields, index) => {
      expect(forwarded[index]).toMatchObject({ url: path, model: client.model, ...fields });
    });
  }

  describe.each(clients)("$name", (client) => {
    it("invoke answers an AIMessage with text", async () => {
      const prompt = "Say hello to the gateway.";
      const message = await gateway.build(client).invoke(prompt);
      expect(message).toBeInstanceOf(AIMessage);
      expect(message.text).not.toBe("");
      expectForwarded(client, client.path.invoke, [{ userTexts: [prompt], toolNames: [] }]);
    });

    it("stream hands over chunks that add up to text", async () => {
      const prompt = "Stream a greeting, please.";
      let text = "";
      let chunks = 0;
      for await (const chunk of await gateway.build(client).stream(prompt)) {
        text += chunk.text;
        chunks += 1;
      }
      expect(chunks).toBeGreaterThan(1);
      expect(text).not.toBe("");
      expectForwarded(client, client.path.stream, [{ userTexts: [prompt] }]);
    });

    // "jsonSchema" sends a native response schema; the default is "jsonSchema" too for ChatOpenAI
    // (a gpt-4.1 model) and ChatGoogleGenerativeAI, but "functionCalling" (a forced tool) for ChatAnthropic.
    it.each(["jsonSchema", "default"] as const)(
      "withStructuredOutput (%s method) returns an object of the schema",
      async (method) => {
        const structured = gateway
          .build(client)
          .withStructuredOutput(weather, method === "default" ? undefined : { method });
        const report = await structured.invoke("Report the weather in Berlin.");
        expect(weather.safeParse(report).success, JSON.stringify(report)).toBe(true);
        const viaTool = method === "default" && client === anthropic;
        expectForwarded(client, client.path.invoke, [
          viaTool ? { toolNames: ["extract"] } : { schema: expect.anything() },
        ]);
      },
    );

    it("bindTools: a tool call, then the tool's result, then text", async () => {
      const model = gateway.build(client);
      const withTools = model.bindTools!([lookupWeather]);
      const human = new HumanMessage("Please call lookup_weather for Berlin");
      const call = await withTools.invoke([human]);
      expect(call.tool_calls?.[0], `expected a tool call, got ${JSON.stringify(call.content)}`).toMatchObject({
        name: "lookup_weather",
      });
      const [toolCall] = call.tool_calls!;
      expect(lookupArgs.safeParse(toolCall!.args).success, JSON.stringify(toolCall!.args)).toBe(true);
      const result = new ToolMessage({ tool_call_id: toolCall!.id!, content: "12°C and cloudy" });
      const answer = await withTools.invoke([human, call, result]);
      expect(answer.text).not.toBe("");
      expectForwarded(client, client.path.invoke, [
        { toolNames: ["lookup_weather"], toolResults: 0 },
        { toolNames: ["lookup_weather"], toolResults: 1 },
      ]);
    });
  });
});

describe("LangChain's view of the gateway's failures (fake upstream)", () => {
  const gateway = useGateway({});

  // LangChain decides retries by the status alone: it would send a 422 again (and bill the provider
  // again), and cannot see a Gemini 429's retry-after. The README's `onFailedAttempt` follows the
  // gateway's own verdict instead; these tests use it, the last one shows why it is needed.
  describe.each(clients)("$name", (client) => {
    function expectError(error: unknown, status: number, code: string): void {
      expect(client.errorView(error)).toEqual({ className: client.errorClass(status), status, code });
    }

    it("an oversize prompt raises the client's 400 with INVESTIGATION_PROMPT_LIMIT, sent once, nothing upstream", async () => {
      const model = gateway.build(client, {
        policy: "investigation.bounded",
        maxRetries: 2,
        onFailedAttempt: retryOnlyRetryable,
      });
      const error = await rejectionOf(model.invoke("x".repeat(30_000)));
      expectError(error, 400, "INVESTIGATION_PROMPT_LIMIT");
      expect(gateway.requestsSent(client)).toBe(1);
      expect(gateway.harness.upstream.received).toHaveLength(0);
    });

    it("an answer failing the schema raises the client's 422 with RESPONSE_SCHEMA_INVALID, sent once", async () => {
      const invalid = JSON.stringify({ city: 42, conditions: "snow" });
      answerNatively(gateway, { status: 200, body: client.answer(invalid) });
      const model = gateway.build(client, {
        policy: "investigation.bounded",
        maxRetries: 2,
        onFailedAttempt: retryOnlyRetryable,
      });
      const structured = model.withStructuredOutput(weather, { method: "jsonSchema" });
      const error = await rejectionOf(structured.invoke("Report the weather in Berlin."));
      expectError(error, 422, "RESPONSE_SCHEMA_INVALID");
      expect(gateway.requestsSent(client)).toBe(1);
      expect(gateway.harness.upstream.received).toHaveLength(1);
    });

    it("a 429 rate limit is retried: with maxRetries 1 it is sent twice, then raises the client's 429", async () => {
      answerNatively(gateway, client.failures.rateLimit, { headers: { "retry-after": "0" } });
      const model = gateway.build(client, { maxRetries: 1, onFailedAttempt: retryOnlyRetryable });
      const error = await rejectionOf(model.invoke("Say hello."));
      expectError(error, 429, "rate_limit");
      expect(gateway.requestsSent(client)).toBe(2);
      expect(gateway.harness.upstream.received).toHaveLength(2);
    });

    it("a 429 rate limit followed by an answer succeeds on the retry", async () => {
      answerNatively(gateway, client.failures.rateLimit, { headers: { "retry-after": "0" }, times: 1 });
      const message = await gateway
        .build(client, { maxRetries: 1, onFailedAttempt: retryOnlyRetryable })
        .invoke("Say hello.");
      expect(message.text).not.toBe("");
      expect(gateway.requestsSent(client)).toBe(2);
      expect(gateway.harness.upstream.received).toHaveLength(2);
    });

    it("an exhausted quota is not retried: with maxRetries 1 it is sent once and raises the client's 429", async () => {
      // The provider's retry-after stays with the provider: relayed, it would make LangChain retry a 429.
      answerNatively(gateway, client.failures.quota, { headers: { "retry-after": "0" } });
      const error = await rejectionOf(
        gateway.build(client, { maxRetries: 1, onFailedAttempt: retryOnlyRetryable }).invoke("Say hello."),
      );
      expectError(error, 429, "quota");
      expect(gateway.requestsSent(client)).toBe(1);
      expect(gateway.harness.upstream.received).toHaveLength(1);
    });
  });

  it("without it, LangChain sends a call whose answer failed its schema again (and the provider bills it again)", async () => {
    const client = openAIChat;
    answerNatively(gateway, { status: 200, body: client.answer(JSON.stringify({ city: 42, conditions: "snow" })) });
    const model = gateway.build(client, { policy: "investigation.bounded", maxRetries: 2 });
    await rejectionOf(model.withStructuredOutput(weather, { method: "jsonSchema" }).invoke("Weather in Berlin?"));
    expect(gateway.harness.upstream.received).toHaveLength(3);
  });
});
