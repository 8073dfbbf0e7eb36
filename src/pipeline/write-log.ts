import type { Deps } from "../deps.js";
import { type InternalStage, internalErrorLine } from "../record/internal-error-line.js";
import type { LogEntry } from "../record/log-entry.js";

/** Hands an entry to the runtime's log, if there is one; a log that fails must not fail the call. */
export function writeLog(deps: Pick<Deps, "log">, entry: LogEntry): void {
  if (deps.log === undefined) return;
  try {
    deps.log(entry);
  } catch {
    // Nothing is left to tell: the log itself failed.
  }
}

/** Logs an internal error of `ref` once, with its stack (`secrets` and key shapes redacted), at `error` level. */
export function logInternalError(
  deps: Pick<Deps, "log">,
  ref: string,
  cause: unknown,
  during: InternalStage,
  secrets: readonly string[],
): void {
  if (deps.log === undefined) return;
  writeLog(deps, internalErrorLine(ref, cause, during, secrets));
}
