import type { GatewayError } from "../../errors/gateway-error.js";
import { errorHeaders, promptgateMember } from "../../errors/promptgate-member.js";
import type { RenderedError } from "../surface.js";

const statusNames: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "NOT_FOUND",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  422: "FAILED_PRECONDITION",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
  529: "UNAVAILABLE",
};

/**
 * Google's error shape: `{error: {code, status, message, details}}`. Its `code` is the HTTP
 * status number natively, so the promptgate code travels as an `ErrorInfo` reason and in the
 * `promptgate` member. A retryable error with the provider's retry information carries it as RetryInfo.
 */
export function renderGeminiError(error: GatewayError, ref: string): RenderedError {
  const details: Record<string, unknown>[] = [
    { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: error.code, domain: "promptgate" },
  ];
  const retryAfterMs = error.details.retryAfterMs;
  if (error.retryable && retryAfterMs !== undefined) {
    details.push({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${retryAfterMs / 1000}s` });
  }
  return {
    status: error.status,
    headers: errorHeaders(error),
    body: {
      error: {
        code: error.status,
        status: statusNames[error.status] ?? "UNKNOWN",
        message: error.message,
        details,
        promptgate: promptgateMember(error, ref),
      },
    },
  };
}

/** The frame that ends a broken stream: a final `data: {"error": …}`, which the SDK raises as ApiError. */
export function renderGeminiStreamError(error: GatewayError, ref: string): string {
  return `data: ${JSON.stringify(renderGeminiError(error, ref).body)}\n\n`;
}
