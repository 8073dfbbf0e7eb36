import type { DepsOf } from "../deps.js";
import { scopedCase } from "../keys/key-bindings.js";
import { policyNameOf } from "../policy/policy.js";
import { callLogLine } from "../record/call-log-line.js";
import type { CallRecord } from "../record/call-record.js";
import type { CaseFreezeStore } from "../store/store.js";
import { logInternalError, writeLog } from "./write-log.js";

/** What keeping a record uses of the gateway: the store's case freezes (a case's invalid answers). */
type RecordDeps = DepsOf<CaseFreezeStore>;

/**
 * Ends a call: appends its record and writes its one log line, timed from the record's arrival
 * time. Resolves once the record is kept, so that a client never holds an answer whose record a
 * crash right after could lose; the log line and the metrics are handed to `afterAnswer`.
 */
export async function completeCall(deps: RecordDeps, record: CallRecord): Promise<void> {
  const kept = deps.recordCall(record);
  const counted = invalidAnswerOfCase(record) ? countInvalidAnswer(deps, record) : undefined;
  if (deps.log !== undefined || deps.metrics !== undefined) {
    const elapsed = deps.now().getTime() - Date.parse(record.time);
    const duration = Number.isFinite(elapsed) ? elapsed : 0;
    // The line is taken now: what it shows is the call as it ended.
    const line = deps.log === undefined ? undefined : callLogLine(record, duration);
    const account = () => {
      if (line !== undefined) writeLog(deps, line);
      observe(deps, record, duration);
    };
    if (deps.afterAnswer === undefined) account();
    else deps.afterAnswer(account);
  }
  await kept;
  await counted;
}

/** Adds a call to the runtime's metrics; a metric that fails is logged, and the call goes on. */
function observe(deps: RecordDeps, record: CallRecord, duration: number): void {
  try {
    deps.metrics?.observe(record, duration);
  } catch (cause) {
    logInternalError(deps, record.ref, cause, "record", []);
  }
}

/** Whether a call of a case got an answer that failed its full schema (not a schema the provider refused). */
function invalidAnswerOfCase(record: CallRecord): boolean {
  const validation = record.validation;
  return (
    record.case !== undefined &&
    record.policy !== undefined &&
    validation !== null &&
    !validation.valid &&
    validation.errors[0]?.validation_keyword !== "provider_schema"
  );
}

/** Counts a case's invalid answer for its policy's cap; a failure to count is logged, and the call's answer stands. */
async function countInvalidAnswer(deps: RecordDeps, record: CallRecord): Promise<void> {
  try {
    const caseId = scopedCase(record.key?.id, record.case as string);
    await deps.store.addInvalidAnswer(caseId, policyNameOf(record.policy as string));
  } catch (cause) {
    logInternalError(deps, record.ref, cause, "record", []);
  }
}
