/**
 * The OpenAI Agents SDK (`@openai/agents` 0.20) through the gateway: only its base URL changes.
 *
 * The Agents SDK brings its own `openai` (7.x, nested under `@openai/agents-openai`), so the client
 * it runs on, and the error classes it throws, come from that copy, not from the repository's
 * `openai` 6: the import below names the file the Agents SDK's own `import "openai"` resolves to.
 */

import {
  Agent,
  type ModelSettings,
  OpenAIProvider,
  Runner,
  type RunStreamEvent,
  retryPolicies,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import OpenAI from "../../node_modules/@openai/agents-openai/node_modules/openai/index.mjs";
import type { ReceivedRequest } from "../support/fake-upstream.js";
import { clientSetups, type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { answerJson, nativeAnswers, nativeFailures } from "../support/native-answers.js";

// Traces would otherwise be exported to api.openai.com.
setTracingDisabled(true);

const model = "gpt-4.1-mini";

const apis = [
  { api: "Responses", useResponses: true, route: "/responses" },
  { api: "chat completions", useResponses: false, route: "/chat/completions" },
] as const;
type Api = (typeof apis)[number];

/** One request the OpenAI client sent to the gateway. */
interface SentRequest {
  url: string;
  body: string;
}

/** A Runner on an Agents SDK OpenAI client pointed at the gateway, and what that client sent. */
interface AgentsClient {
  runner: Runner;
  sent: SentRequest[];
}

function agentsClient(
  harness: GatewayUnderTest,
  api: Api,
  options: { policy?: string; maxRetries?: number } = {},
): AgentsClient {
  const sent: SentRequest[] = [];
  const prefix = options.policy === undefined ? "" : `/policies/${options.policy}`;
  const openAIClient = new OpenAI({
    apiKey: "sk-agents",
    baseURL: `${harness.gateway.url}${prefix}/openai/v1`,
    maxRetries: options.maxRetries ?? 0,
    fetch: (url, init) => {
      sent.push({ url: String(url), body: typeof init?.body === "string" ? init.body : "" });
      return fetch(url, init);
    },
  });
  const modelProvider = new OpenAIProvider({ openAIClient, useResponses: api.useResponses });
  return { runner: new Runner({ modelProvider, tracingDisabled: true }), sent };
}

/** The model requests the fake upstream received (the simulated setup has none). */
function upstreamCalls(
  harness: GatewayUnderTest,
  api: Api,
): Array<ReceivedRequest & { json: Record<string, unknown> }> {
  return harness.upstream.received
    .filter((request) => request.url === `/openai/v1${api.route}`)
    .map((request) => ({ ...request, json: JSON.parse(request.body) }));
}

/** The function tool of every tool run, with every input its `execute` was called with. */
function weatherTool() {
  const parameters = z.object({ city: z.string() });
  const inputs: unknown[] = [];
  const lookupWeather = tool({
    name: "lookup_weather",
    description: "Looks up the current weather of a city.",
    parameters,
    execute: async (input) => {
      inputs.push(input);
      return `It is sunny in ${input.city}.`;
    },
  });
  return { lookupWeather, parameters, inputs };
}

const forecast = z.object({ city: z.string(), temperature_c: z.number(), summary: z.string() });

/**
 * How a tool call is asked for: by naming the tool in the last user text, or by the tool choice.
 * No endless loop under "required": the Agents SDK drops `tool_choice` from the request after the
 * tool ran (the Agent's `resetToolChoice`), and the simulator answers text after a tool result anyway.
 */
const toolTriggers: Array<{ trigger: string; input: string; modelSettings: ModelSettings }> = [
  { trigger: "the user text names the tool", input: "Please call lookup_weather for Berlin", modelSettings: {} },
  {
    trigger: 'toolChoice "required"',
    input: "What is the weather in Berlin?",
    modelSettings: { toolChoice: "required" },
  },
];

/** The text deltas of a streamed run's raw model events. */
async function textDeltasOf(events: AsyncIterable<RunStreamEvent>): Promise<string[]> {
  const deltas: string[] = [];
  for await (const event of events) {
    if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta")
      deltas.push(event.data.delta);
  }
  return deltas;
}

/** The tool results a model request carries: `function_call_output` items (Responses), `tool` messages (chat). */
function toolResultsOf(body: Record<string, unknown>): unknown[] {
  const turns = Array.isArray(body.input) ? body.input : Array.isArray(body.messages) ? body.messages : [];
  return turns.filter((turn: Record<string, unknown>) => turn.type === "function_call_output" || turn.role === "tool");
}

/** The response-format member of a model request: Responses `text.format`, chat `response_format`. */
function responseFormatOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const text = body.text as { format?: Record<string, unknown> } | undefined;
  if (text?.format !== undefined) return text.format;
  const format = body.response_format as { json_schema?: Record<string, unknown> } | undefined;
  return format?.json_schema === undefined ? undefined : { type: "json_schema", ...format.json_schema };
}

describe.each(clientSetups)(
  "the OpenAI Agents SDK through the gateway, $name",
  ({ environment, forwards: recordsUpstream }) => {
    let harness: GatewayUnderTest;

    beforeAll(async () => {
      harness = await startGatewayUnderTest({ ...environment });
    });
    afterAll(() => harness.close());
    beforeEach(() => {
      harness.upstream.received.length = 0;
      harness.upstream.answerWith(undefined);
    });

    /** Every request the client sent reached the provider unchanged (fake upstream), or none did (simulated). */
    function expectPassedThrough(client: AgentsClient, api: Api): void {
      for (const request of client.sent) expect(new URL(request.url).pathname).toBe(`/openai/v1${api.route}`);
      const upstream = upstreamCalls(harness, api);
      if (!recordsUpstream) {
        expect(upstream).toEqual([]);
        return;
      }
      expect(upstream.map((request) => request.json)).toEqual(client.sent.map((request) => JSON.parse(request.body)));
    }

    describe.each(apis)("$api", (api) => {
      it.each(toolTriggers)("runs a function tool once when $trigger, then answers text", async (trigger) => {
        const client = agentsClient(harness, api);
        const { lookupWeather, parameters, inputs } = weatherTool();
        const agent = new Agent({
          name: "Weather",
          instructions: "Answer questions about the weather.",
          model,
          tools: [lookupWeather],
          modelSettings: trigger.modelSettings,
        });

        const result = await client.runner.run(agent, trigger.input);

        expect(result.rawResponses[0]?.output.map((item) => item.type)).toContain("function_call");
        expect(inputs).toHaveLength(1);
        expect(parameters.safeParse(inputs[0]).success).toBe(true);
        expect(result.finalOutput).toEqual(expect.any(String));
        expect(result.finalOutput).not.toBe("");
        expect(client.sent).toHaveLength(2);
        expectPassedThrough(client, api);
        if (!recordsUpstream) return;
        const [first, second] = upstreamCalls(harness, api).map((request) => request.json);
        expect(first?.model).toBe(model);
        expect(JSON.stringify(first?.tools)).toContain('"lookup_weather"');
        expect(toolResultsOf(first ?? {})).toEqual([]);
        expect(toolResultsOf(second ?? {})).toHaveLength(1);
        expect(JSON.stringify(toolResultsOf(second ?? {}))).toContain(
          `It is sunny in ${(inputs[0] as { city: string }).city}.`,
        );
      });

      it("returns structured output parsed by the agent's zod outputType", async () => {
        const client = agentsClient(harness, api);
        const agent = new Agent({ name: "Forecaster", instructions: "Give a forecast.", model, outputType: forecast });

        const result = await client.runner.run(agent, "Forecast for Berlin");

        expect(forecast.parse(result.finalOutput)).toEqual(result.finalOutput);
        expect(client.sent).toHaveLength(1);
        expectPassedThrough(client, api);
        if (!recordsUpstream) return;
        const [request] = upstreamCalls(harness, api);
        expect(request?.json.model).toBe(model);
        expect(responseFormatOf(request?.json ?? {})).toMatchObject({
          type: "json_schema",
          strict: true,
          schema: { type: "object", required: ["city", "temperature_c", "summary"], additionalProperties: false },
        });
      });

      it("streams a run: text events, then a non-empty final output", async () => {
        const client = agentsClient(harness, api);
        const agent = new Agent({ name: "Streamer", instructions: "Be brief.", model });

        const result = await client.runner.run(agent, "stream this please", { stream: true });
        const deltas = await textDeltasOf(result);
        await result.completed;

        expect(result.error).toBeFalsy();
        expect(deltas.length).toBeGreaterThan(0);
        expect(result.finalOutput).toBe(deltas.join(""));
        expect(result.finalOutput).toContain("stream this please");
        expect(client.sent).toHaveLength(1);
        expect(JSON.parse(client.sent[0]?.body ?? "{}")).toMatchObject({ model, stream: true });
        expectPassedThrough(client, api);
      });
    });
  },
);

/** A successful native answer whose text is `text`: a Responses `response` or a `chat.completion`. */
function nativeSuccess(api: Api, text: string): unknown {
  return api.useResponses ? nativeAnswers.responses(text) : nativeAnswers.chat(text);
}

const rateLimited = nativeFailures.openai.rateLimit.body;

describe.each(apis)("what an Agents SDK client sees of failures, $api", (api) => {
  let harness: GatewayUnderTest;

  beforeAll(async () => {
    harness = await startGatewayUnderTest();
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.upstream.received.length = 0;
    harness.upstream.answerWith(undefined);
  });

  const plainAgent = new Agent({ name: "Plain", instructions: "Be brief.", model });

  it("rejects an oversize input with BadRequestError INVESTIGATION_PROMPT_LIMIT, sent once, nothing upstream", async () => {
    const client = agentsClient(harness, api, { policy: "investigation.bounded", maxRetries: 2 });

    const error = await client.runner.run(plainAgent, "x".repeat(30_000)).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(apiError.headers.get("x-should-retry")).toBe("false");
    expect(apiError.error).toMatchObject({
      promptgate: { code: "INVESTIGATION_PROMPT_LIMIT", retryable: false, prompt_size: { check: "preflight" } },
    });
    expect(client.sent).toHaveLength(1);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("raises the same error class from the client OpenAIProvider builds itself from apiKey and baseURL", async () => {
    const modelProvider = new OpenAIProvider({
      apiKey: "sk-agents",
      baseURL: `${harness.gateway.url}/policies/investigation.bounded/openai/v1`,
      useResponses: api.useResponses,
    });
    const runner = new Runner({ modelProvider, tracingDisabled: true });

    const accepted = await runner.run(plainAgent, "hello from the provider's own client");
    const error = await runner.run(plainAgent, "x".repeat(30_000)).catch((caught: unknown) => caught);

    expect(accepted.finalOutput).toContain("hello from the provider's own client");
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(upstreamCalls(harness, api)).toHaveLength(1);
  });

  it("does not retry the rejection under the Agents SDK's providerSuggested retry policy either", async () => {
    const client = agentsClient(harness, api, { policy: "investigation.bounded", maxRetries: 2 });
    const agent = plainAgent.clone({
      modelSettings: { retry: { maxRetries: 2, policy: retryPolicies.providerSuggested() } },
    });

    const error = await client.runner.run(agent, "x".repeat(30_000)).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(client.sent).toHaveLength(1);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses an answer that violates the outputType's schema with 422 RESPONSE_SCHEMA_INVALID, sent once", async () => {
    const client = agentsClient(harness, api, { policy: "investigation.bounded", maxRetries: 2 });
    harness.upstream.answerWith((_request, response) =>
      answerJson(response, 200, nativeSuccess(api, JSON.stringify({ city: 42, temperature_c: "warm" }))),
    );
    const agent = new Agent({ name: "Forecaster", instructions: "Give a forecast.", model, outputType: forecast });

    const error = await client.runner.run(agent, "Forecast for Berlin").catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    const apiError = error as InstanceType<typeof OpenAI.UnprocessableEntityError>;
    expect(apiError.status).toBe(422);
    expect(apiError.code).toBe("RESPONSE_SCHEMA_INVALID");
    expect(client.sent).toHaveLength(1);
    expect(upstreamCalls(harness, api)).toHaveLength(1);
  });

  it("raises RateLimitError after the client's one retry of a 429", async () => {
    const client = agentsClient(harness, api, { maxRetries: 1 });
    harness.upstream.answerWith((_request, response) => answerJson(response, 429, rateLimited, { "retry-after": "0" }));

    const error = await client.runner.run(plainAgent, "hello").catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).status).toBe(429);
    expect(client.sent).toHaveLength(2);
    expect(upstreamCalls(harness, api)).toHaveLength(2);
  });

  it("succeeds when the client's retry of a 429 is answered", async () => {
    const client = agentsClient(harness, api, { maxRetries: 1 });
    harness.upstream.answerWith((_request, response) => {
      harness.upstream.answerWith(undefined); // the retry goes to the simulated provider
      answerJson(response, 429, rateLimited, { "retry-after": "0" });
    });

    const result = await client.runner.run(plainAgent, "hello after a rate limit");

    expect(result.finalOutput).toContain("hello after a rate limit");
    expect(client.sent).toHaveLength(2);
    expect(upstreamCalls(harness, api)).toHaveLength(2);
  });

  it("leaves retries to the client by default, and adds its own attempts, without the client's retries, under a retry policy", async () => {
    harness.upstream.answerWith((_request, response) => answerJson(response, 429, rateLimited, { "retry-after": "0" }));

    // No modelSettings.retry: the runner makes one attempt, and the client's own maxRetries applies.
    const byDefault = agentsClient(harness, api, { maxRetries: 1 });
    await expect(byDefault.runner.run(plainAgent, "hello")).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    expect(byDefault.sent).toHaveLength(2);

    // With a retry policy, the first attempt keeps the client's retries and every later attempt
    // runs with maxRetries 0: 2 sends, then 1 per runner retry.
    const withPolicy = agentsClient(harness, api, { maxRetries: 1 });
    const agent = plainAgent.clone({
      modelSettings: {
        retry: { maxRetries: 1, policy: retryPolicies.httpStatus([429]), backoff: { initialDelayMs: 1 } },
      },
    });
    await expect(withPolicy.runner.run(agent, "hello")).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    expect(withPolicy.sent).toHaveLength(3);
    expect(upstreamCalls(harness, api)).toHaveLength(5);
  });
});
