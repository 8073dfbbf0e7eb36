import type { Outcome } from "./fire.js";

/** An answer the soak holds a ref of, and whether the gateway must or must not have recorded it. */
export interface HeldAnswer {
  ref: string;
  kind: string;
  /** A 200 read to its end or a stream that reached its final event: its record must exist. */
  whole: boolean;
  /**
   * A kill broke the connection after the stream's final event: the client holds the whole answer,
   * but the response had not ended, so the call was still in flight at the kill.
   */
  brokenAfterFinal: boolean;
}

/** Everything the soak counts about the answers its clients got. */
export interface Tally {
  requests: number;
  /** `<kind> → <status> <code>`, `<kind> → cut by kill`, `<kind> → no answer <why>`. */
  byClass: Map<string, number>;
  /** Milliseconds each request of a kind took, from sending it to the end of its answer or its failure. */
  durations: Map<string, number[]>;
  /** Valid calls and what went wrong with them besides a kill. */
  valid: { calls: number; answered: number; status5xx: number; errorEvents: number; unanswered: number };
  /** 5xx answers to the injected upstream faults (expected, classified by the gateway). */
  faultStatus5xx: number;
  /** Every 5xx answer by `<kind> → <status> <code>`, to hold against the documented upstream classes. */
  serverErrors: Map<string, number>;
  /** Requests cut by a kill: no complete answer, and the process they went to was killed. */
  cutByKill: number;
  /** Refs of the requests cut by a kill that had received a response head. */
  cutRefs: string[];
  /** Answers that are not what their class expects, by class, with a few examples. */
  wrong: Map<string, number>;
  wrongExamples: string[];
  /** Answers whose record must exist (whole ones) or may exist (other recorded classes), by ref. */
  recorded: HeldAnswer[];
  /** Refs of answers refused before authentication: no record may exist. */
  unrecorded: string[];
  /** Answers without a ref header (each a finding: every answer of the gateway carries one). */
  withoutRef: number;
}

export function createTally(): Tally {
  return {
    requests: 0,
    byClass: new Map(),
    durations: new Map(),
    valid: { calls: 0, answered: 0, status5xx: 0, errorEvents: 0, unanswered: 0 },
    faultStatus5xx: 0,
    serverErrors: new Map(),
    cutByKill: 0,
    cutRefs: [],
    wrong: new Map(),
    wrongExamples: [],
    recorded: [],
    unrecorded: [],
    withoutRef: 0,
  };
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** What an outcome's class expects that it did not get, or undefined when it got it. */
function mismatch(outcome: Outcome): string | undefined {
  const expect = outcome.shot.expect;
  if (expect === undefined || outcome.status === undefined) return undefined;
  if (!expect.statuses.includes(outcome.status)) return `status ${outcome.status} ${outcome.code ?? ""}`.trim();
  if (expect.code !== undefined && outcome.code !== undefined && outcome.code !== expect.code)
    return `code ${outcome.code}`;
  if (expect.noLocation && outcome.location) return "a location header";
  if (expect.validation !== undefined && outcome.status === 200 && outcome.validation !== expect.validation)
    return `x-promptgate-validation ${outcome.validation ?? "missing"}`;
  if (expect.completeStream && outcome.status === 200 && (!outcome.finalEvent || outcome.errorEvent))
    return outcome.errorEvent ? "an error event in the stream" : "a stream without its final event";
  return undefined;
}

/** Counts one outcome; `killed` tells whether the process the request went to was killed meanwhile. */
export function count(tally: Tally, outcome: Outcome, killed: boolean): void {
  const { shot } = outcome;
  tally.requests++;
  const durations = tally.durations.get(shot.kind) ?? [];
  durations.push(outcome.ms);
  tally.durations.set(shot.kind, durations);
  const cut = !outcome.complete && killed;
  if (cut) {
    tally.cutByKill++;
    bump(tally.byClass, `${shot.kind} → cut by kill`);
  } else if (outcome.status === undefined) {
    bump(tally.byClass, `${shot.kind} → no answer ${outcome.failure ?? ""}`.trim());
  } else {
    const stream = shot.stream && outcome.status === 200;
    const streamNote = stream && outcome.errorEvent ? " stream-error" : stream && !outcome.finalEvent ? " unended" : "";
    const broken = outcome.failure !== undefined && outcome.complete ? " (then cut)" : "";
    bump(
      tally.byClass,
      `${shot.kind} → ${outcome.status}${outcome.code ? ` ${outcome.code}` : ""}${streamNote}${broken}`,
    );
  }
  if (outcome.status !== undefined && outcome.status >= 500)
    bump(tally.serverErrors, `${shot.kind} → ${outcome.status} ${outcome.code ?? ""}`.trim());
  if (shot.valid) {
    tally.valid.calls++;
    if (outcome.complete) tally.valid.answered++;
    if (outcome.status !== undefined && outcome.status >= 500) tally.valid.status5xx++;
    if (outcome.status === 200 && outcome.errorEvent) tally.valid.errorEvents++;
    if (!outcome.complete && !cut) tally.valid.unanswered++;
  } else if (outcome.status !== undefined && outcome.status >= 500 && shot.kind.startsWith("fault-")) {
    tally.faultStatus5xx++;
  }
  if (!cut) {
    const wrong = outcome.status === undefined ? `no answer (${outcome.failure})` : mismatch(outcome);
    if (wrong !== undefined && (shot.expect !== undefined || shot.valid)) {
      bump(tally.wrong, shot.kind);
      if (tally.wrongExamples.length < 20) tally.wrongExamples.push(`${shot.kind}: ${wrong}`);
    }
  }
  if (outcome.status === undefined) return;
  if (outcome.ref === undefined) {
    tally.withoutRef++;
    return;
  }
  if (shot.unrecorded) {
    tally.unrecorded.push(outcome.ref);
    return;
  }
  if (shot.untraced) return;
  if (cut) tally.cutRefs.push(outcome.ref);
  if (!outcome.complete) return;
  const whole = outcome.status === 200 && (!shot.stream || outcome.finalEvent);
  tally.recorded.push({
    ref: outcome.ref,
    kind: shot.kind,
    whole,
    brokenAfterFinal: outcome.failure !== undefined && killed,
  });
}
