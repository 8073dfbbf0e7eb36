import { type CallLogLine, logLevelOf } from "./call-log-line.js";
import type { DebugLine } from "./debug-line.js";
import type { InternalErrorLine } from "./internal-error-line.js";
import { type RefusalCountLine, type RefusedRequest, refusalCounter } from "./refusal-count.js";

/** What the gateway tells its runtime's log: a call's line, an internal error, a refusal to count, or a step at `debug`. */
export type LogEntry = CallLogLine | InternalErrorLine | RefusedRequest | DebugLine;

/** A line as a runtime's log writes it: its level, its message and its fields. */
export interface WrittenLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  line: CallLogLine | InternalErrorLine | RefusalCountLine | DebugLine;
}

/**
 * The lines a runtime's log writes for its entries, made once per log (process or isolate), as it
 * counts refusals between its lines: undefined for a refusal counted into a later line.
 */
export function logLines(refusals = refusalCounter()): (entry: LogEntry, now: number) => WrittenLine | undefined {
  return (entry, now) => {
    if (!("event" in entry)) return { level: logLevelOf(entry), message: "call", line: entry };
    if (entry.event === "internal_error") return { level: "error", message: "internal error", line: entry };
    if (entry.event === "debug") return { level: "debug", message: `call ${entry.step}`, line: entry };
    const counted = refusals(now);
    return counted === undefined
      ? undefined
      : { level: "warn", message: "refused before authentication", line: counted };
  };
}
