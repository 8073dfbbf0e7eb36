import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

// Model routing inside workerd: the OpenAI API reaches Anthropic (the simulated provider, in-process) and Gemini (the
// outbound fake of vitest.workers.config.ts) by model name, translated both ways, as on Node
// (test/e2e/routing-openai-sdk.test.ts).

type Json = Record<string, unknown>;

function post(path: string, body: Json): Promise<Response> {
  return exports.default.fetch(
    new Request(`http://promptgate.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
      body: JSON.stringify(body),
    }),
  );
}

const hello = [{ role: "user", content: "Hello" }];

describe("routing by model on Workers", () => {
  it("answers a chat completion for an Anthropic model in the OpenAI shape", async () => {
    const response = await post("/openai/v1/chat/completions", { model: "claude-sonnet-4-5", messages: hello });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-model")).toBe("claude-sonnet-4-5");
    const body = (await response.json()) as Json & { choices: { message: { content: string } }[] };
    expect(body).toMatchObject({ object: "chat.completion", model: "claude-sonnet-4-5" });
    expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
  });

  it("streams a chat completion for an Anthropic model, ending with [DONE]", async () => {
    const response = await post("/openai/v1/chat/completions", {
      model: "claude-sonnet-4-5",
      messages: hello,
      stream: true,
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"object":"chat.completion.chunk"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("answers the Responses API for a Gemini model", async () => {
    const response = await post("/openai/v1/responses", { model: "gemini-2.5-flash", input: "Hello" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ object: "response", status: "completed", model: "gemini-2.5-flash" });
  });

  it("refuses a translated call over the limit in the OpenAI shape, and a reasoning level outside the allowlist", async () => {
    const oversize = await post("/policies/investigation.bounded/openai/v1/chat/completions", {
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "x".repeat(20_001) }],
    });
    expect(oversize.status).toBe(400);
    expect(await oversize.json()).toMatchObject({ error: { code: "INVESTIGATION_PROMPT_LIMIT" } });
    const level = await post("/openai/v1/chat/completions", {
      model: "gpt-5",
      messages: hello,
      reasoning_effort: "minimal",
    });
    expect(level.status).toBe(400);
    expect(await level.json()).toMatchObject({ error: { param: "reasoning_effort" } });
  });

  it("falls back once after a transient failure and says so", async () => {
    const response = await post("/openai/v1/chat/completions", {
      model: "fast",
      messages: [{ role: "user", content: "FAIL-TRANSIENTLY" }],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-model")).toBe("claude-haiku-4-5");
    expect(response.headers.get("x-promptgate-model-fallback")).toBe("fast_to_claude-haiku-4-5");
    expect(await response.json()).toMatchObject({ object: "chat.completion", model: "claude-haiku-4-5" });
  });
});
