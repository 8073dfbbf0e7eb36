import { jsonObjectOf } from "../json/json-object-of.js";
import {
  classOfStatus,
  clientStatusOf,
  transientClasses,
  type UpstreamErrorCode,
  upstreamErrorMessages,
} from "./error-classes.js";
import { failureReason, statusReason } from "./failure-reason.js";
import { GatewayError, type GatewayErrorDetails, type UpstreamErrorRecord } from "./gateway-error.js";
import { recordedErrorText } from "./recorded-error-text.js";
import { retryAfterOf } from "./retry-after.js";
import { UpstreamTimedOut, type UpstreamTimeoutStage } from "./upstream-timed-out.js";

/** What a surface reads from its provider's native error body. */
export interface UpstreamErrorHint {
  code: UpstreamErrorCode;
  /** How long the provider's body asks the client to wait (e.g. Gemini's RetryInfo). */
  retryAfterMs?: number;
}

/**
 * A surface's reading of its provider's native error body (`status` is undefined for an error
 * event inside a stream); undefined where the body tells nothing beyond the status.
 */
export type ErrorRecogniser = (
  status: number | undefined,
  body: Readonly<Record<string, unknown>>,
) => UpstreamErrorHint | undefined;

/** A provider's failed answer as the classifier reads it. */
export interface FailedAnswer {
  /** The HTTP status; undefined for an error event inside a stream. */
  status: number | undefined;
  headers: Readonly<Record<string, string>>;
  /** The body as text. */
  text: string;
}

/** What classifying needs besides the answer. */
export interface ClassifyContext {
  /** The surface's recogniser of its provider's error bodies. */
  recognise: ErrorRecogniser | undefined;
  /** The current time in milliseconds, for a `retry-after` given as a date. */
  now: number;
  /** Known secrets to redact from the text kept for the record. */
  secrets: readonly string[];
}

/**
 * The one classification of a failed provider answer: the surface's recogniser first, then the
 * status. The error carries the class's fixed message and client status, the provider's retry
 * information for a retryable class, and, for the record only, what `recordedErrorText` keeps of
 * the provider's text.
 */
export function classifyUpstreamAnswer(answer: FailedAnswer, context: ClassifyContext): GatewayError {
  const body = jsonObjectOf(answer.text);
  const hint = body === undefined ? undefined : context.recognise?.(answer.status, body);
  const code = hint?.code ?? classOfStatus(answer.status);
  const retryAfterMs = retryAfterOf(answer.headers, context.now) ?? hint?.retryAfterMs;
  const reason = answer.status === undefined ? "stream_error_event" : statusReason(answer.status);
  return upstreamFailure(code, answer.status, answer.text, context.secrets, retryAfterMs, reason);
}

/**
 * A provider call that got no (whole) answer: `timeout` when the policy's deadline passed or one of
 * the request's stage timeouts fired (`cause` an `UpstreamTimedOut`, its reason `<stage>_timeout`),
 * otherwise `upstream` (connection refused or reset, a body cut off).
 */
export function classifyTransportFailure(
  cause: unknown,
  deadlinePassed: boolean,
  secrets: readonly string[],
): GatewayError {
  if (UpstreamTimedOut.isInstance(cause) && !deadlinePassed) {
    const text = `The upstream ${cause.stage} timeout fired.`;
    return upstreamFailure("timeout", undefined, text, secrets, undefined, `${cause.stage}_timeout`);
  }
  if (deadlinePassed) {
    return upstreamFailure(
      "timeout",
      undefined,
      "The policy's upstream deadline passed.",
      secrets,
      undefined,
      "deadline",
    );
  }
  return upstreamFailure("upstream", undefined, describeCause(cause), secrets, undefined, failureReason(cause));
}

/** The stage whose timeout a classified failure's reason names, if it names one. */
export function timedOutStageOf(reason: string | undefined): UpstreamTimeoutStage | undefined {
  switch (reason) {
    case "connect_timeout":
      return "connect";
    case "first_byte_timeout":
      return "first_byte";
    case "idle_timeout":
      return "idle";
    default:
      return undefined;
  }
}

/**
 * The classified error for `code`, keeping `text` for the record with keys and quoted input masked, and
 * `reason` (an identifier; unset: the status's class) for the log line.
 */
export function upstreamFailure(
  code: UpstreamErrorCode,
  upstreamStatus: number | undefined,
  text: string,
  secrets: readonly string[],
  retryAfterMs?: number,
  reason: string = upstreamStatus === undefined ? "no_answer" : statusReason(upstreamStatus),
): GatewayError {
  const upstreamError: UpstreamErrorRecord = {
    class: code,
    text: recordedErrorText(text, secrets),
    reason,
  };
  if (upstreamStatus !== undefined) upstreamError.status = upstreamStatus;
  const details: GatewayErrorDetails = { upstreamError };
  if (transientClasses.has(code) && retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
  return new GatewayError(code, clientStatusOf(code, upstreamStatus), upstreamErrorMessages[code], details);
}

/** The error's name, code and message, and its cause's, for the record. */
function describeCause(cause: unknown, depth = 0): string {
  if (!(cause instanceof Error)) return "The provider call failed without an answer.";
  const code = (cause as { code?: unknown }).code;
  const inner = depth < 2 && cause.cause !== undefined ? ` (cause: ${describeCause(cause.cause, depth + 1)})` : "";
  return `${cause.name}${typeof code === "string" ? ` ${code}` : ""}: ${cause.message}${inner}`;
}
