import type { CallRecord } from "./call-record.js";

/**
 * The one structured log line of a call: identifiers, the decision, sizes, the provider's
 * status, the duration and the error class. Built from the record's identifiers and numbers
 * only, so it never holds prompt or answer text, upstream error text or keys (a named key's id and name are
 * identifiers, not secrets).
 */
export interface CallLogLine {
  ref: string;
  policy: string | undefined;
  case: string | undefined;
  call_label: string | undefined;
  /** The id and name of the named key the call presented; absent for an unnamed key or none. Never its secret. */
  key_id?: string | undefined;
  key_name?: string | undefined;
  surface: string;
  provider: string;
  model: string | undefined;
  route: string;
  decision: CallRecord["decision"];
  /** The preflight's measured total and its total with the reserve, in code points. */
  preflight_total_chars: number | undefined;
  preflight_conservative_total_chars: number | undefined;
  /** The provider check's total of the representation sent. */
  provider_total_chars: number | undefined;
  upstream_status: number | undefined;
  /** Why the provider call failed, as an identifier (`ECONNREFUSED`, `http_5xx`, `deadline`); never its text. */
  upstream_reason: string | undefined;
  duration_ms: number;
  /** The error class or code the client received. */
  error: string | undefined;
}

/** The log line of a finished call that took `durationMs`. */
export function callLogLine(record: CallRecord, durationMs: number): CallLogLine {
  return {
    ref: record.ref,
    policy: record.policy,
    case: record.case,
    call_label: record.call_label,
    key_id: record.key?.id,
    key_name: record.key?.name,
    surface: record.surface,
    provider: record.provider,
    model: record.model,
    route: record.route,
    decision: record.decision,
    preflight_total_chars: record.preflight?.total_chars,
    preflight_conservative_total_chars: record.preflight?.conservative_total_chars,
    provider_total_chars: record.provider_check?.total_chars,
    upstream_status: record.upstream_status,
    upstream_reason: record.upstream_error?.reason,
    duration_ms: Math.max(0, Math.round(durationMs)),
    error: record.error,
  };
}

/** The level a call's line is logged at: `error` for the gateway's own failures, `warn` for other failures. */
export function logLevelOf(line: CallLogLine): "info" | "warn" | "error" {
  if (line.error === "internal") return "error";
  return line.error === undefined ? "info" : "warn";
}
