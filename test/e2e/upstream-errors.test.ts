import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicBodies, openaiBodies } from "../errors/provider-error-bodies.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

const passthroughPolicy = `name = "errors.passthrough"

[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0

[upstream_errors]
text = "passthrough"
`;

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({
    PROMPTGATE_POLICIES: copyPolicies({ "errors.passthrough.toml": passthroughPolicy }),
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

/** The fake upstream answers with `answers` in turn, then as the simulated provider. */
function upstreamAnswers(...answers: Array<{ status: number; body: unknown; headers?: Record<string, string> }>): void {
  let index = 0;
  harness.upstream.answerWith((_request, response) => {
    const answer = answers[index++];
    if (answer === undefined) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        }),
      );
      return;
    }
    response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    response.end(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body));
  });
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

const chat = { model: "gpt-test", messages: [{ role: "user" as const, content: "hello" }] };

describe("what an SDK makes of a classified upstream failure", () => {
  it("retries a rate limit after the provider's retry-after-ms, and then succeeds", async () => {
    upstreamAnswers({ status: 429, body: openaiBodies.rateLimitExceeded, headers: { "retry-after-ms": "10" } });
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 1 });
    const completion = await client.chat.completions.create(chat);
    expect(completion.choices[0]?.message.content).toBe("ok");
    expect(harness.upstream.received).toHaveLength(2);
  });

  it("does not retry an exhausted quota: RateLimitError with x-should-retry false and the fixed message", async () => {
    upstreamAnswers({ status: 429, body: openaiBodies.insufficientQuota, headers: { "retry-after": "1" } });
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 2 });
    const error = await rejectionOf(client.chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const quota = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(quota.error).toMatchObject({
      code: "quota",
      type: "insufficient_quota",
      message: "The provider account's quota is exhausted.",
      promptgate: { retryable: false },
    });
    expect(quota.headers?.get("x-should-retry")).toBe("false");
    expect(quota.headers?.get("retry-after")).toBeNull();
    expect(JSON.stringify(quota.error)).not.toContain("billing details");
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("keeps Anthropic's 529 overloaded_error as a 529 the SDK retries", async () => {
    const overloaded = { status: 529, body: anthropicBodies.overloaded, headers: { "retry-after-ms": "10" } };
    upstreamAnswers(overloaded, overloaded);
    const client = new Anthropic({ apiKey: "client-key", baseURL: `${harness.gateway.url}/anthropic`, maxRetries: 1 });
    const error = await rejectionOf(
      client.messages.create({ model: "claude-test", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as InstanceType<typeof Anthropic.InternalServerError>).status).toBe(529);
    expect((error as InstanceType<typeof Anthropic.InternalServerError>).error).toMatchObject({
      error: { type: "overloaded_error", code: "worker", promptgate: { retryable: true } },
    });
    expect(harness.upstream.received).toHaveLength(2);
  });

  it("gives a model-not-found 404 the model class", async () => {
    upstreamAnswers({ status: 404, body: openaiBodies.modelNotFound });
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 2 });
    const error = await rejectionOf(client.chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model");
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("answers a provider's 400 about the request as a native 400 INVALID_REQUEST with a fixed message", async () => {
    upstreamAnswers({ status: 400, body: openaiBodies.contextLengthExceeded });
    const client = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 2 });
    const error = await rejectionOf(client.chat.completions.create(chat));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: "INVALID_REQUEST",
      message: "The provider rejected the request as invalid.",
    });
  });

  it("answers a successful status with a body that is not JSON as a retryable 502 upstream", async () => {
    upstreamAnswers({ status: 200, body: "{not json" });
    const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("upstream");
  });

  it("classifies a proxied route's failure the same way", async () => {
    upstreamAnswers({ status: 401, body: openaiBodies.invalidApiKey });
    const response = await fetch(`${harness.gateway.url}/openai/v1/models`, {
      headers: { authorization: "Bearer sk-x" },
    });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(JSON.parse(text).error).toMatchObject({ code: "authentication", type: "authentication_error" });
    expect(text).not.toContain("Incorrect API key");
  });
});

describe('a policy with upstream_errors.text = "passthrough"', () => {
  it("relays the provider's failed answer as it came, status and body", async () => {
    upstreamAnswers({ status: 429, body: openaiBodies.insufficientQuota });
    const response = await fetch(`${harness.gateway.url}/policies/errors.passthrough/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual(openaiBodies.insufficientQuota);
    expect(response.headers.get("x-promptgate-ref")).toMatch(/^ref_[0-9a-f]{16}$/);
  });
});

describe("the call's log line", () => {
  it("holds the call's identifiers, decision, sizes, status, duration and error class, and no prompt text", async () => {
    const marker = "PROMPT-MARKER-41c9";
    upstreamAnswers({ status: 503, body: openaiBodies.engineOverloaded });
    await fetch(`${harness.gateway.url}/policies/investigation.bounded/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-promptgate-case": "log-1", "x-promptgate-call": "step-3" },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: marker }] }),
    });
    const line = harness.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.case === "log-1");
    expect(line).toMatchObject({
      level: "warn",
      msg: "call",
      ref: expect.stringMatching(/^ref_[0-9a-f]{16}$/),
      policy: expect.stringMatching(/^investigation\.bounded@[0-9a-f]{12}$/),
      call_label: "step-3",
      surface: "openai",
      route: "/chat/completions",
      decision: "sent",
      preflight_total_chars: marker.length,
      preflight_conservative_total_chars: marker.length + 1500,
      provider_total_chars: marker.length,
      upstream_status: 503,
      duration_ms: expect.any(Number),
      error: "worker",
    });
    for (const text of harness.logs) {
      expect(text).not.toContain(marker);
      expect(text).not.toContain("overloaded, please");
    }
  });
});
