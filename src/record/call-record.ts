import type { UpstreamErrorRecord } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import type { UpstreamTimeoutStage } from "../errors/upstream-timed-out.js";
import type { Validation } from "../schema/diagnostics.js";
import type { RemovedCitation } from "../window/citations.js";
import type { InternalErrorNote } from "./internal-error-line.js";

/**
 * What the gateway decided about a call; `cancelled` when the client went away before its answer ended; `queued`
 * when it became an answer job (its run is a call of its own); `answered` when the gateway answered it from its
 * own state (an answer job's poll or cancel).
 */
export type CallDecision = "sent" | "measured" | "rejected" | "failed" | "cancelled" | "queued" | "answered";

/** One attempt of a call that fell back. */
export interface CallAttempt {
  model: string;
  /** `simulated`, or the upstream's origin. */
  provider: string;
  provider_check?: PromptSize | undefined;
  upstream_status?: number | undefined;
  error?: string | undefined;
  /** false for a fallback that was not sent (refused by its checks or its provider). */
  tried: boolean;
}

/** The named key of a call, as its record keeps it: never its secret. */
export interface CallKey {
  id: string;
  name: string;
  team: string | null;
}

/** The window that refused a call, as its record keeps it. */
export interface RecordedLimit {
  /** The limit's name, e.g. `requests_per_minute`. */
  window: string;
  limit: number;
  used: number;
  retry_after_seconds: number;
}

/** One call as the gateway records it, append-only (contract section 7). Never holds prompt text or keys. */
export interface CallRecord {
  ref: string;
  /** ISO 8601 time the call arrived. */
  time: string;
  /** `name@12hex` of the policy version that applied, once resolved. */
  policy: string | undefined;
  case: string | undefined;
  call_label: string | undefined;
  /** The named key the call presented (`name` and `team` as they were then); absent for an unnamed key or none. */
  key?: CallKey | undefined;
  surface: string;
  /** `simulated`, or the upstream's origin. */
  provider: string;
  model: string | undefined;
  route: string;
  preflight: PromptSize | undefined;
  provider_check: PromptSize | undefined;
  decision: CallDecision;
  /** The answer job the call created, polled, cancelled or ran, if any. */
  job?: string | undefined;
  /** A recall of the window toolkit: the evidence it named and the page it chose (of `pages`, once known). */
  recall?: { evidence: string; page: number; pages?: number } | undefined;
  upstream_status: number | undefined;
  /** The validation outcome of a structured answer; `null` when there was nothing to validate. */
  validation: Validation | null;
  /** A repair that applied: its rule and the answer as the provider gave it. */
  repair: { rule: string; original: string } | undefined;
  /**
   * The name of the call's response schema where the gateway knows it: the named schema of `x-promptgate-schema`,
   * or the one of its policy's `validation.schemas` the schema is.
   */
  schema?: string;
  /** What the schema projection left out, by path. */
  projection_omitted: string[];
  /** The provider's own model id, where the model table routes the call to one other than the name it asked for. */
  upstream_model?: string;
  /**
   * Both attempts of a call whose model fell back (the first failed transiently): each one's model, provider,
   * provider check, status and error; `tried: false` for a fallback its checks or its provider refused. The
   * top-level fields describe the attempt whose answer the client got.
   */
  attempts?: CallAttempt[];
  /** The JSON paths of the fields counted in `other_chars` (at most 100), when there are any. */
  other_fields?: string[];
  /** The JSON paths of content the gateway could not measure, when there is any. */
  unmeasured?: string[];
  /**
   * Citations taken out of the answer because the source index the call named (`x-promptgate-sources`) lacks their
   * id, or the answer cited it before: where each stood and its id (at most 100; a long id cut), never other text.
   */
  citations_removed?: RemovedCitation[];
  /**
   * The provider request the client's answer came from: milliseconds until its answer's head arrived, and until its
   * body ended (absent when it did not end, e.g. a client that went away).
   */
  upstream_timing?: { first_byte_ms: number; total_ms?: number };
  /** The provider's id of the response the client got, as the provider wrote it. */
  response_id?: string;
  /** Why each of its answers ended, as the provider wrote it (`stop`, `length`, `STOP`, `end_turn` …). */
  finish_reasons?: string[];
  /** The tokens the provider counted for the answer the client got, where it said (its usage members). */
  usage?: { input_tokens?: number; output_tokens?: number };
  /** The error code the client received, if any. */
  error: string | undefined;
  /**
   * The window of a limit over time that refused the call (`RATE_LIMITED`, `BUDGET_EXHAUSTED`): the limit's name, the
   * limit, what the window had counted before the call, and the seconds until it has room (as the client was told).
   */
  limit?: RecordedLimit;
  /**
   * A provider failure as it came: its class, status and error text with keys redacted. The only
   * place upstream error text is kept (unless the policy passes it through to the client).
   */
  upstream_error?: UpstreamErrorRecord;
  /** The stage timeout that ended the provider call, where one did (contract section 11); the deadline is `upstream_error.reason`. */
  upstream_timeout?: UpstreamTimeoutStage;
  /**
   * The first failure of the gateway's own during the call: where, and the error's class. Its stack is in
   * the `internal_error` log line of the same ref. Set also when the client's answer went out unharmed
   * (a prefix that could not be remembered, a stream whose end could not be validated); `error` is
   * `internal` only when the client received that error.
   */
  internal_error?: InternalErrorNote;
}
