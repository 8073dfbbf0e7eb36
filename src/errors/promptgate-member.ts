import type { GatewayError } from "./gateway-error.js";

/** The `promptgate` member every native error body carries (contract section 5). */
export function promptgateMember(error: GatewayError, ref: string): Record<string, unknown> {
  const member: Record<string, unknown> = { code: error.code, ref, retryable: error.retryable };
  if (error.details.promptSize) member.prompt_size = error.details.promptSize;
  if (error.details.diagnostics !== undefined) member.diagnostics = error.details.diagnostics;
  if (error.details.limit !== undefined) member.limit = error.details.limit;
  return member;
}

/**
 * Headers of every gateway error: JSON; `x-should-retry: false` when retrying cannot help, which the
 * OpenAI and Anthropic SDKs obey over the status; and for a retryable error with the provider's retry
 * information, `retry-after-ms` and `retry-after`, which both SDKs read before their own backoff.
 */
export function errorHeaders(error: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", ...error.details.headers };
  if (!error.retryable) headers["x-should-retry"] = "false";
  const retryAfterMs = error.details.retryAfterMs;
  if (error.retryable && retryAfterMs !== undefined) {
    headers["retry-after-ms"] = String(Math.round(retryAfterMs));
    headers["retry-after"] = String(Math.ceil(retryAfterMs / 1000));
  }
  return headers;
}
