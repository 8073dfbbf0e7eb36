import type { UpstreamErrorHint } from "../../errors/classify.js";
import { durationMs } from "../../errors/retry-after.js";
import { isObject, type JsonObject } from "../../json/json-object.js";

const rpc = "type.googleapis.com/google.rpc.";
const accountReasons = new Set(["SERVICE_DISABLED", "CONSUMER_INVALID", "BILLING_DISABLED", "PROJECT_INVALID"]);
const statusNames: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/**
 * Reads Google's error body `{error: {code, status, message, details}}` (also a stream's final
 * error frame). `RESOURCE_EXHAUSTED` is quota when its QuotaFailure names a daily quota or has no
 * rate details, and rate_limit when it is a per-minute limit or carries a RetryInfo, whose delay
 * the client is given. An invalid API key (a 400 natively) is authentication.
 */
export function classifyGeminiError(
  status: number | undefined,
  body: Readonly<Record<string, unknown>>,
): UpstreamErrorHint | undefined {
  const error = isObject(body.error) ? body.error : undefined;
  if (error === undefined) return undefined;
  const details = Array.isArray(error.details) ? error.details.filter(isObject) : [];
  const message = typeof error.message === "string" ? error.message : "";
  const reasons = details.filter((detail) => detail["@type"] === `${rpc}ErrorInfo`).map((detail) => detail.reason);
  if (reasons.includes("API_KEY_INVALID") || /API key (?:not valid|expired)/i.test(message)) {
    return { code: "authentication" };
  }
  if (reasons.some((reason) => typeof reason === "string" && accountReasons.has(reason))) {
    return { code: "account_selection" };
  }
  const codeStatus = typeof error.code === "number" ? statusNames[error.code] : undefined;
  const statusName = typeof error.status === "string" ? error.status : (codeStatus ?? statusNames[status ?? 0]);
  switch (statusName) {
    case "RESOURCE_EXHAUSTED":
      return exhausted(details);
    case "UNAUTHENTICATED":
      return { code: "authentication" };
    case "PERMISSION_DENIED":
      return { code: /not found/i.test(message) ? "NOT_FOUND" : "authentication" };
    case "FAILED_PRECONDITION":
      // e.g. "User location is not supported", "free tier is not available in your country": the account's setup.
      return { code: "account_selection" };
    case "NOT_FOUND":
      return { code: /\bmodels?\b/i.test(message) && !/cachedContent/i.test(message) ? "model" : "NOT_FOUND" };
    case "UNAVAILABLE":
      return { code: "worker" };
    case "DEADLINE_EXCEEDED":
      return { code: "timeout" };
    case "INTERNAL":
    case "UNKNOWN":
      return { code: "upstream" };
    case "INVALID_ARGUMENT":
      return { code: "INVALID_REQUEST" };
    default:
      return undefined;
  }
}

/** Quota or rate limit, from a RESOURCE_EXHAUSTED answer's details. */
function exhausted(details: JsonObject[]): UpstreamErrorHint {
  const retryInfo = details.find((detail) => detail["@type"] === `${rpc}RetryInfo`);
  const quotaIds = details
    .filter((detail) => detail["@type"] === `${rpc}QuotaFailure` && Array.isArray(detail.violations))
    .flatMap((detail) => (detail.violations as unknown[]).filter(isObject))
    .map((violation) => `${String(violation.quotaId ?? "")} ${String(violation.quotaMetric ?? "")}`);
  if (quotaIds.some((id) => /per_?day/i.test(id))) return { code: "quota" };
  const retryAfterMs = durationMs(retryInfo?.retryDelay);
  const perMinute = quotaIds.some((id) => /per_?(?:minute|second)/i.test(id));
  if (retryInfo !== undefined || perMinute || quotaIds.length === 0) {
    return retryAfterMs === undefined ? { code: "rate_limit" } : { code: "rate_limit", retryAfterMs };
  }
  return { code: "quota" };
}
