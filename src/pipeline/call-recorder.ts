import type { Deps } from "../deps.js";
import type { CallRecord } from "../record/call-record.js";
import { errorClassOf, type InternalStage } from "../record/internal-error-line.js";
import { completeCall } from "./complete-call.js";
import { logInternalError } from "./write-log.js";

/** A call's record as the steps fill it in, and the one way it is kept. */
export interface CallRecorder {
  readonly record: CallRecord;
  /**
   * A failure of the gateway's own: logged with its stack under the call's ref and, the first one,
   * noted on the record, unless the record is kept already (a proxied stream's end).
   */
  internal(cause: unknown, during: InternalStage): void;
  /**
   * Releases what the call holds (its deadline), then keeps its record and writes its log line, once
   * however often it is asked; resolves when the record is kept, and never rejects.
   */
  settle(): Promise<void>;
  /** Adds something the call holds (a session's turn), given back when it settles, before its record is kept. */
  hold(release: () => Promise<void>): void;
}

/** What a recorder needs besides the record. */
export interface RecorderOptions {
  /** What an internal error's stack must not show: the configured keys and the client's credentials. */
  secrets: () => readonly string[];
  /** Frees what the call holds once it ends: its deadline's timer and client watch. */
  release: () => void;
}

/** The recorder of one call; every path, streamed or not, settles it exactly once. */
export function callRecorder(deps: Deps, record: CallRecord, options: RecorderOptions): CallRecorder {
  let settled: Promise<void> | undefined;
  const held: (() => Promise<void>)[] = [];
  const recorder: CallRecorder = {
    record,
    internal(cause, during) {
      if (settled === undefined && record.internal_error === undefined) {
        record.internal_error = { during, class: errorClassOf(cause) };
      }
      logInternalError(deps, record.ref, cause, during, options.secrets());
    },
    settle() {
      if (settled === undefined) {
        options.release();
        settled = held.length === 0 ? completeCall(deps, record) : releaseHeld().then(() => completeCall(deps, record));
      }
      return settled;
    },
    hold(release) {
      held.push(release);
    },
  };
  async function releaseHeld(): Promise<void> {
    for (const release of held) {
      try {
        await release();
      } catch (cause) {
        recorder.internal(cause, "release");
      }
    }
  }
  return recorder;
}
