import type { ServerResponse } from "node:http";

/*
 * The providers' native bodies that a test's fake upstream answers with in place of the simulated
 * provider: a whole answer whose output is a given text, and each provider's per-minute rate limit
 * (which the gateway classes `rate_limit`) and spent quota (`quota`).
 */

/** A whole answer of each surface whose output text is `text`. */
export const nativeAnswers = {
  chat: (text: string) => ({
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-4.1-mini",
    choices: [
      { index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: "stop", logprobs: null },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  }),
  responses: (text: string) => ({
    id: "resp_fake",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    model: "gpt-4.1-mini",
    output: [
      {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    error: null,
    incomplete_details: null,
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    },
  }),
  gemini: (text: string) => ({
    candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "gemini-2.5-flash",
  }),
  anthropic: (text: string) => ({
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  }),
};

/** Gemini's RESOURCE_EXHAUSTED for the quota `quotaId`: per minute is a rate limit, per day a spent quota. */
function resourceExhausted(quotaId: string) {
  return {
    error: {
      code: 429,
      status: "RESOURCE_EXHAUSTED",
      message: "Resource has been exhausted.",
      details: [
        { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaId }] },
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "0s" },
      ],
    },
  };
}

/** Each provider's native error bodies: a per-minute rate limit (429) and a spent quota. */
export const nativeFailures = {
  openai: {
    rateLimit: {
      status: 429,
      body: { error: { message: "Rate limit reached.", type: "requests", param: null, code: "rate_limit_exceeded" } },
    },
    quota: {
      status: 429,
      body: {
        error: { message: "Quota exceeded.", type: "insufficient_quota", param: null, code: "insufficient_quota" },
      },
    },
  },
  gemini: {
    rateLimit: { status: 429, body: resourceExhausted("GenerateRequestsPerMinutePerProjectPerModel") },
    quota: { status: 429, body: resourceExhausted("GenerateRequestsPerDayPerProjectPerModel") },
  },
  anthropic: {
    rateLimit: {
      status: 429,
      body: { type: "error", error: { type: "rate_limit_error", message: "Rate limit reached." } },
    },
    quota: { status: 402, body: { type: "error", error: { type: "billing_error", message: "Billing problem." } } },
  },
};

/** Writes a JSON answer to the fake upstream's response. */
export function answerJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}
