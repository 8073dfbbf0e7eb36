import type { GatewayError } from "./gateway-error.js";

/** The `promptgate` member every native error body carries (contract section 5). */
export function promptgateMember(error: GatewayError, ref: string): Record<string, unknown> {
  const member: Record<string, unknown> = { code: error.code, ref, retryable: error.retryable };
  if (error.details.promptSize) member.prompt_size = error.details.promptSize;
  if (error.details.diagnostics !== undefined) member.diagnostics = error.details.diagnostics;
  return member;
}

/** Headers of every gateway error: JSON, and `x-should-retry: false` when retrying cannot help. */
export function errorHeaders(error: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", ...error.details.headers };
  if (!error.retryable) headers["x-should-retry"] = "false";
  return headers;
}
