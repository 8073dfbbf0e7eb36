import type { StoredCalls } from "./records.js";
import type { HeldAnswer, Tally } from "./tally.js";

/** The answers the soak's clients hold, set against the records the database kept. */
export interface RecordsCheck {
  /** 200 answers whose response ended (a body read to its end, a stream closed after its final event). */
  whole: HeldAnswer[];
  missingWhole: HeldAnswer[];
  /** Other answers whose response ended (4xx, 502, 504…): each has a record too. */
  others: HeldAnswer[];
  missingOthers: HeldAnswer[];
  /**
   * In flight at a kill: streams whose final event the client had read when the kill broke the
   * connection, and requests cut before their answer was whole that had a response head with a ref.
   */
  finalEventAtKill: HeldAnswer[];
  missingFinalEventAtKill: HeldAnswer[];
  cutWithRef: number;
  cutWithRecord: number;
  /** Answers refused before authentication that nevertheless have a record (must be 0). */
  recordedUnauthenticated: number;
}

/** Looks every answer the clients hold up in the store, by its `x-promptgate-ref`. */
export function checkRecords(tally: Tally, stored: StoredCalls): RecordsCheck {
  const missing = (answers: HeldAnswer[]) => answers.filter((answer) => !stored.refs.has(answer.ref));
  const whole = tally.recorded.filter((answer) => answer.whole && !answer.brokenAfterFinal);
  const others = tally.recorded.filter((answer) => !answer.whole);
  const finalEventAtKill = tally.recorded.filter((answer) => answer.whole && answer.brokenAfterFinal);
  return {
    whole,
    missingWhole: missing(whole),
    others,
    missingOthers: missing(others),
    finalEventAtKill,
    missingFinalEventAtKill: missing(finalEventAtKill),
    cutWithRef: tally.cutRefs.length,
    cutWithRecord: tally.cutRefs.filter((ref) => stored.refs.has(ref)).length,
    recordedUnauthenticated: tally.unrecorded.filter((ref) => stored.refs.has(ref)).length,
  };
}

/** `kind count, …` of a list of answers. */
export function byKind(answers: ReadonlyArray<{ kind: string }>): string {
  const kinds = new Map<string, number>();
  for (const answer of answers) kinds.set(answer.kind, (kinds.get(answer.kind) ?? 0) + 1);
  return [...kinds].map(([kind, value]) => `${kind} ${value}`).join(", ");
}
