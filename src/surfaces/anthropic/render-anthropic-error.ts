import type { GatewayError } from "../../errors/gateway-error.js";
import { errorHeaders, promptgateMember } from "../../errors/promptgate-member.js";
import type { RenderedError } from "../surface.js";

const errorTypes: Record<number, string> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  502: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/**
 * Anthropic's error shape: `{type: "error", error: {type, message, details}, request_id}`, plus code and
 * promptgate; the SDK reads `details.error_code` into `errorCode`.
 */
export function renderAnthropicError(error: GatewayError, ref: string): RenderedError {
  return {
    status: error.status,
    headers: { ...errorHeaders(error), "request-id": ref },
    body: {
      type: "error",
      error: {
        type: error.code === "quota" ? "billing_error" : (errorTypes[error.status] ?? "invalid_request_error"),
        message: error.message,
        code: error.code,
        details: { error_code: error.code },
        promptgate: promptgateMember(error, ref),
      },
      request_id: ref,
    },
  };
}

/** The event that ends a broken stream: `event: error` with the error body, which the SDK raises as APIError. */
export function renderAnthropicStreamError(error: GatewayError, ref: string): string {
  return `event: error\ndata: ${JSON.stringify(renderAnthropicError(error, ref).body)}\n\n`;
}
