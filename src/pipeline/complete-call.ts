import type { Deps } from "../deps.js";
import { callLogLine } from "../record/call-log-line.js";
import type { CallRecord } from "../record/call-record.js";
import { writeLog } from "./write-log.js";

/**
 * Ends a call: appends its record and writes its one log line, timed from the record's arrival
 * time. Resolves once the record is kept, so that a client never holds an answer whose record a
 * crash right after could lose.
 */
export async function completeCall(deps: Deps, record: CallRecord): Promise<void> {
  const kept = deps.recordCall(record);
  if (deps.log !== undefined) {
    const duration = deps.now().getTime() - Date.parse(record.time);
    writeLog(deps, callLogLine(record, Number.isFinite(duration) ? duration : 0));
  }
  await kept;
}
