import type { UpstreamErrorHint } from "../../errors/classify.js";
import { isObject } from "../../json/json-object.js";

const accountCodes = /^(?:mismatched|invalid|no)_(?:organization|project)$/;

/**
 * Reads OpenAI's error body: `{error: {message, type, param, code}}`, or a Responses stream's
 * `{type: "error", code, message}` event. 429 splits into `insufficient_quota` (quota) and
 * `rate_limit_exceeded` (rate_limit); `model_not_found` is the model class.
 */
export function classifyOpenAIError(
  status: number | undefined,
  body: Readonly<Record<string, unknown>>,
): UpstreamErrorHint | undefined {
  const error = isObject(body.error) ? body.error : body.type === "error" ? body : undefined;
  if (error === undefined) return undefined;
  const code = typeof error.code === "string" ? error.code : "";
  const type = typeof error.type === "string" ? error.type : "";
  const message = typeof error.message === "string" ? error.message : "";
  if (code === "insufficient_quota" || type === "insufficient_quota") return { code: "quota" };
  if (code === "rate_limit_exceeded" || type === "rate_limit_exceeded") return { code: "rate_limit" };
  if (code === "model_not_found") return { code: "model" };
  if (code === "invalid_api_key") return { code: "authentication" };
  if (accountCodes.test(code)) return { code: "account_selection" };
  if (/overloaded/i.test(message) && (status === undefined || status >= 500)) return { code: "worker" };
  if (status === 404 && /\bmodel\b/i.test(message)) return { code: "model" };
  if (status === undefined && (type === "server_error" || code === "server_error")) return { code: "upstream" };
  return undefined;
}
