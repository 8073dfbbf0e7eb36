import type { GatewayError } from "../../errors/gateway-error.js";
import { errorHeaders, promptgateMember } from "../../errors/promptgate-member.js";
import type { RenderedError } from "../surface.js";

function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
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
        type: errorType(error.status),
        param: error.details.param ?? null,
        code: error.code,
        promptgate: promptgateMember(error, ref),
      },
    },
  };
}
