/*
 * LangChain's chat models turn their SDK's retries off and retry on their own rules, which look at
 * the status only: a 422 (an answer that failed its schema) is retried, so the provider is called
 * and billed again, and a 429 that carries no `retry-after` the client can see (the Gemini client
 * keeps no headers) is not retried at all. `retryOnlyRetryable` puts the gateway's own verdict in
 * their place; it is a plain function with no dependency, for a model's `onFailedAttempt`.
 */

/** The error classes the gateway marks `retryable: true`. */
const retryableCodes = new Set(["rate_limit", "worker", "timeout", "upstream"]);

/**
 * For LangChain's `onFailedAttempt`: returns (LangChain retries) when the gateway marked the error
 * retryable, or when no answer came at all (the connection failed); throws the error otherwise, an
 * abort included.
 */
export function retryOnlyRetryable(error: unknown): void {
  if (!isObject(error) || error.name === "AbortError") throw error;
  const code = promptgateCode(error);
  if (code === undefined && statusOf(error) === undefined) return;
  if (code === undefined || !retryableCodes.has(code)) throw error;
}

/** The gateway's error code, from where each SDK's error keeps the error body. */
export function promptgateCode(error: Record<string, unknown>): string | undefined {
  // openai: `error` is the body's error object; @anthropic-ai/sdk: `error` is the whole body.
  const body = isObject(error.error) ? error.error : undefined;
  const member = body?.promptgate ?? (isObject(body?.error) ? body.error.promptgate : undefined);
  if (isObject(member) && typeof member.code === "string") return member.code;
  // @google/generative-ai: the body's `details`, whose ErrorInfo names the code as its reason.
  const details = Array.isArray(error.errorDetails) ? error.errorDetails : [];
  const info = details.find((detail) => isObject(detail) && detail.domain === "promptgate");
  return isObject(info) && typeof info.reason === "string" ? info.reason : undefined;
}

function statusOf(error: Record<string, unknown>): number | undefined {
  return typeof error.status === "number" ? error.status : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
