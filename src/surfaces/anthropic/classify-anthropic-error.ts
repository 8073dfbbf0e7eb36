import type { UpstreamErrorHint } from "../../errors/classify.js";
import type { UpstreamErrorCode } from "../../errors/error-classes.js";
import { isObject } from "../../json/json-object.js";

/** Anthropic's `ErrorType`s and their classes; `not_found_error` and `invalid_request_error` look further. */
const classOfType: Readonly<Record<string, UpstreamErrorCode>> = {
  overloaded_error: "worker",
  rate_limit_error: "rate_limit",
  billing_error: "quota",
  authentication_error: "authentication",
  permission_error: "authentication",
  request_too_large: "PAYLOAD_TOO_LARGE",
  timeout_error: "timeout",
  api_error: "upstream",
};

/**
 * Reads Anthropic's error body `{type: "error", error: {type, message}}`, the same in a stream's
 * `event: error`. A 529 `overloaded_error` is the worker class; a 400 about the credit balance
 * is quota, not the client's request.
 */
export function classifyAnthropicError(
  _status: number | undefined,
  body: Readonly<Record<string, unknown>>,
): UpstreamErrorHint | undefined {
  const error = isObject(body.error) ? body.error : undefined;
  if (error === undefined || typeof error.type !== "string") return undefined;
  const message = typeof error.message === "string" ? error.message : "";
  const known = classOfType[error.type];
  if (known !== undefined) return { code: known };
  if (error.type === "not_found_error") return { code: /\bmodel\b/i.test(message) ? "model" : "NOT_FOUND" };
  if (error.type === "invalid_request_error") {
    return { code: /credit balance/i.test(message) ? "quota" : "INVALID_REQUEST" };
  }
  return undefined;
}
