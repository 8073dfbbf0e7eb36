import type { GatewayError } from "../../errors/gateway-error.js";
import { errorHeaders, promptgateMember } from "../../errors/promptgate-member.js";
import type { RenderedError } from "../surface.js";

function errorType(error: GatewayError): string {
  if (error.code === "quota") return "insufficient_quota";
  if (error.status === 401) return "authentication_error";
  if (error.status === 403) return "permission_error";
  if (error.status === 429) return "rate_limit_error";
  if (error.status >= 500) return "server_error";
  return "invalid_request_error";
}

/** OpenAI's error shape: `{error: {message, type, param, code}}`, plus the `promptgate` member. */
export function renderOpenAIError(error: GatewayError, ref: string): RenderedError {
  return {
    status: error.status,
    headers: { ...errorHeaders(error), "x-request-id": ref },
    body: {
      error: {
        message: error.message,
        type: errorType(error),
        param: error.details.param ?? null,
        code: error.details.nativeCode ?? error.code,
        promptgate: promptgateMember(error, ref),
      },
    },
  };
}

/** The event that ends a broken stream: a data object with an `error` key, which the SDK raises as APIError. */
export function renderOpenAIStreamError(error: GatewayError, ref: string): string {
  return `data: ${JSON.stringify(renderOpenAIError(error, ref).body)}\n\n`;
}
