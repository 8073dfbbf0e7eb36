import { describe, expect, it } from "vitest";
import { appUnderTest } from "../support/app-under-test.js";
import { chainSchema, failingAnswer, reproductionChain } from "./union-chains.js";

// Issue 51, item 3, over raw HTTP through the app, on Node (Ajv) and in workerd (the interpretive validator): a
// client's schema that is a `$ref` chain of 4-alternative unions 8 levels deep and an upstream answer that fails it at
// the bottom. test/e2e/validation-budget.test.ts sends the same through the openai SDK to a Node gateway.

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

async function callWithFailingAnswer(policy: string) {
  const { app } = await appUnderTest({ OPENAI_API_KEY: "k" }, undefined, async () =>
    Response.json(chatCompletion(JSON.stringify(failingAnswer(8)))),
  );
  return app.request(`/policies/${policy}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "gpt-test",
      messages: [{ role: "user", content: "Answer in JSON." }],
      response_format: {
        type: "json_schema",
        json_schema: { name: "union_chain", schema: chainSchema(reproductionChain(8)), strict: false },
      },
    }),
  });
}

const cutShort = { validation_path: "", validation_keyword: "budget", hint: expect.stringContaining("cut short") };

describe("an answer to a chain of unions 8 levels deep, over HTTP", () => {
  it("is 422 RESPONSE_SCHEMA_INVALID under on_invalid = error, its diagnostics cut short", async () => {
    const response = await callWithFailingAnswer("investigation.bounded");
    expect(response.status).toBe(422);
    const { error } = (await response.json()) as {
      error: { code: string; promptgate: { diagnostics: { valid: boolean; errors: unknown[] } } };
    };
    expect(error.code).toBe("RESPONSE_SCHEMA_INVALID");
    expect(error.promptgate.diagnostics.valid).toBe(false);
    expect(error.promptgate.diagnostics.errors[0]).toEqual(cutShort);
    expect(error.promptgate.diagnostics.errors.length).toBeLessThanOrEqual(20);
  });

  it("is relayed and annotated invalid under on_invalid = annotate, its diagnostics cut short", async () => {
    const response = await callWithFailingAnswer("default");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    const { promptgate } = (await response.json()) as { promptgate: { validation: { errors: unknown[] } } };
    expect(promptgate.validation.errors[0]).toEqual(cutShort);
  });
});
