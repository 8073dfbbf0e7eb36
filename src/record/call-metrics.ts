import { type LimitName, limitNames, policyNameOf } from "../policy/policy.js";
import type { CallRecord } from "./call-record.js";

/**
 * What a runtime measures of every call, from its record once it is kept (Node: Prometheus metrics). Absent where a
 * runtime has none (Workers). `observe` must not throw: a metric never costs a call its answer.
 */
export interface CallMetrics {
  observe(record: CallRecord, durationMs: number): void;
  /** The metrics in the Prometheus text format. */
  render(): Promise<{ contentType: string; body: string }>;
  /** Whether `/metrics` answers without the admin key (`PROMPTGATE_METRICS_PUBLIC=true`). */
  public: boolean;
}

/** How a call's validation came out, for a metric: an answer that passed only once repaired is `repaired`. */
export function validationOutcome(record: CallRecord): "valid" | "invalid" | "repaired" | undefined {
  if (record.validation === null) return undefined;
  if (!record.validation.valid) return "invalid";
  return record.repair === undefined ? "valid" : "repaired";
}

/** The check that refused a call: a limit over time, else (for its size) the provider check when it ran, else the preflight. */
export function refusingCheck(record: CallRecord): "preflight" | "provider" | "limit" {
  if (record.limit !== undefined) return "limit";
  return record.provider_check === undefined ? "preflight" : "provider";
}

/** A record's policy name without its version, or `none` before one was resolved. */
export function policyLabel(record: CallRecord): string {
  return record.policy === undefined ? "none" : policyNameOf(record.policy);
}

const knownLimitNames: ReadonlySet<string> = new Set<string>(limitNames);

/**
 * The window of the limit that refused a call, for a metric: one of the limit names (`requests_per_minute` …), `other`
 * for a name the gateway does not know; undefined when no limit refused the call.
 */
export function refusingWindow(record: CallRecord): LimitName | "other" | undefined {
  const window = record.limit?.window;
  if (window === undefined) return undefined;
  return knownLimitNames.has(window) ? (window as LimitName) : "other";
}
