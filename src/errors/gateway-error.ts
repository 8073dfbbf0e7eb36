import { type FailureClass, transientClasses } from "./error-classes.js";
import type { PromptSize } from "./prompt-size.js";

/** The stable codes of contract section 5. */
export type GatewayErrorCode =
  | "INVESTIGATION_PROMPT_LIMIT"
  | "CACHE_PREFIX_UNKNOWN"
  | "INVALID_REQUEST"
  | "PAYLOAD_TOO_LARGE"
  | "POLICY_NOT_FOUND"
  | "POLICY_MISMATCH"
  | "POLICY_NOT_ALLOWED"
  | "MODEL_NOT_ALLOWED"
  | "KEY_READ_ONLY"
  | "KEY_REVOKED"
  | "RESPONSE_SCHEMA_INVALID"
  | "SESSION_NOT_FOUND"
  | "SESSION_EXPIRED"
  | "SESSION_SETTINGS_CHANGED"
  | "SESSION_TOKEN_LIMIT"
  | "JOB_EXPIRED"
  | "INVALID_ANSWER_LIMIT"
  | "EVIDENCE_NOT_FOUND"
  | "EVIDENCE_LIMIT"
  | "SOURCE_INDEX_LIMIT"
  | "PASS_THROUGH_STORAGE_LIMIT"
  | "PAGE_OUT_OF_RANGE"
  | "RECALL_ONE_EVIDENCE"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "RATE_LIMITED"
  | "BUDGET_EXHAUSTED"
  | FailureClass;

/** What the call record keeps of a failed provider call; never rendered to the client. */
export interface UpstreamErrorRecord {
  /** The class the failure was given. */
  class: string;
  /** The provider's HTTP status; absent when no answer arrived or the error came inside a stream. */
  status?: number;
  /**
   * The provider's error type, code and status and its message with quoted parts masked, or how the
   * call failed; keys redacted, cut to a bounded length (see `recordedErrorText`).
   */
  text: string;
  /**
   * Why, as an identifier the call's log line shows too: `http_5xx` (the status's class), `deadline`,
   * `stream_error_event`, or a transport failure's code (`ECONNREFUSED`, `UND_ERR_SOCKET`); never text.
   */
  reason?: string;
}

/** Options that some errors carry besides their code. */
export interface GatewayErrorDetails {
  /** The request field at fault, as a path of known field names (never a value). */
  param?: string;
  /** The provider's own error code where its clients know one for this case (e.g. `previous_response_not_found`). */
  nativeCode?: string;
  promptSize?: PromptSize;
  diagnostics?: unknown;
  /** Protocol headers the error response needs, e.g. `allow` on a 405. */
  headers?: Record<string, string>;
  /** When the client may retry, from the provider's retry information (`retry-after`, Gemini's RetryInfo). */
  retryAfterMs?: number;
  /** The window of a limit over time that refused the call (contract section 10). */
  limit?: { window: string; limit: number; used: number; retry_after_seconds: number };
  /** For the call record only: the provider's failure (keys and quoted input masked). */
  upstreamError?: UpstreamErrorRecord;
}

/**
 * Every failure the gateway answers itself. The message is fixed text chosen by the
 * gateway: it never carries request content, keys or upstream text.
 */
export class GatewayError extends Error {
  override readonly name = "GatewayError";
  readonly retryable: boolean;

  constructor(
    readonly code: GatewayErrorCode,
    readonly status: number,
    message: string,
    readonly details: GatewayErrorDetails = {},
  ) {
    super(message);
    this.retryable = transientClasses.has(code) || code === "RATE_LIMITED";
  }

  static isInstance(value: unknown): value is GatewayError {
    return value instanceof GatewayError;
  }
}

/** A request body or field the gateway cannot take. */
export function invalidRequest(message: string, param?: string): GatewayError {
  return new GatewayError("INVALID_REQUEST", 400, message, param === undefined ? {} : { param });
}
