import type { Kill } from "./disruptions.js";
import type { FloodFigures } from "./flood-burst.js";
import type { GatewayChild, Lifetime } from "./gateway-child.js";
import type { HalfOpenFigures } from "./half-open.js";
import { byKind, type RecordsCheck } from "./records-check.js";
import { fixed, longestLifetime, percentile, rssDrift, seconds, type Verdict } from "./report.js";
import type { Tally } from "./tally.js";

/** Everything a finished soak measured. */
export interface SoakRun {
  tally: Tally;
  records: RecordsCheck;
  overlongLabels: number;
  gateway: GatewayChild;
  kills: readonly Kill[];
  halfOpenPhases: readonly HalfOpenFigures[];
  halfOpenSockets: number;
  flood: FloodFigures;
  redirectTargetHits: number;
  upstreamCalls: number;
  stopExit: string;
  /** Soak time (ms) at which the load began: lifetimes are told from there. */
  loadStart: number;
  now: number;
}

const sum = <T>(values: readonly T[], of: (value: T) => number) =>
  values.reduce((total, value) => total + of(value), 0);

/** RSS of one process: its first sample, its kernel high-water mark and its last sample, in MiB. */
function rssLine(lifetime: Lifetime): string {
  const first = lifetime.rss[0]?.mib ?? Number.NaN;
  const last = lifetime.rss.at(-1)?.mib ?? Number.NaN;
  return `RSS ${fixed(first)} → peak ${fixed(lifetime.peakMiB)} → ${fixed(last)} MiB`;
}

/** Prints what the run measured beyond the verdicts: records, kills, processes, half-open phases, floods. */
export function printFigures(run: SoakRun): void {
  const { records, tally, gateway } = run;
  console.log(
    `\nrecords: ${records.whole.length} whole 200 answers (${records.missingWhole.length} missing), ` +
      `${records.others.length} other answers (${records.missingOthers.length} missing); ` +
      `in flight at a kill: ${tally.cutByKill} requests cut (${records.cutWithRef} had a response head, ${records.cutWithRecord} of them a record), ` +
      `${records.finalEventAtKill.length} streams whose final event the client had read (${records.missingFinalEventAtKill.length} without a record)`,
  );
  for (const answer of [...records.missingWhole, ...records.missingFinalEventAtKill].slice(0, 10))
    console.log(
      `  missing record: ${answer.kind} ${answer.ref}${answer.brokenAfterFinal ? " (cut after its final event)" : ""}`,
    );
  const killLines = run.kills.map(
    (kill) =>
      `${seconds(kill.at)} ${kill.mode} (${kill.streamsInFlight} streams mid-way, back in ${fixed(kill.restartMs, 0)} ms)`,
  );
  console.log(`kills: ${killLines.join("; ") || "none"}`);
  for (const lifetime of gateway.lifetimes) {
    const from = seconds(Math.max(0, lifetime.startedAt - run.loadStart));
    const to = seconds((lifetime.endedAt ?? run.now) - run.loadStart);
    console.log(
      `gateway #${lifetime.index} pid ${lifetime.pid}: ${from}–${to}, ended ${lifetime.end ?? "?"} (${lifetime.exit ?? "?"}); ${rssLine(lifetime)}`,
    );
  }
  const phases = run.halfOpenPhases;
  const closeSeconds = phases.flatMap((phase) => phase.closeSeconds);
  console.log(
    `half-open: ${phases.length} phases × ${run.halfOpenSockets} sockets; closed by the gateway after ${fixed(percentile(closeSeconds, 50))} s p50, ` +
      `${fixed(percentile(closeSeconds, 100))} s max; ${sum(phases, (phase) => phase.answered408)} got 408; ${sum(phases, (phase) => phase.outlived)} outlived 15 s`,
  );
  const floods = [...run.flood.statuses].map(([key, value]) => `${key} × ${value}`).join(", ");
  console.log(`flood burst: ${floods}; log lines meanwhile ${run.flood.logLines}`);
  const counts = gateway.counts();
  console.log(
    `upstream calls ${run.upstreamCalls}, log lines ${counts.logLines}, internal errors logged ${counts.internalErrors}, ` +
      `records not stored ${counts.recordFailures}, stderr lines ${counts.stderrLines}, answers without a ref ${tally.withoutRef}`,
  );
  if (tally.wrongExamples.length > 0) console.log(`unexpected answers, e.g.:\n  ${tally.wrongExamples.join("\n  ")}`);
  if (counts.stderrLines > 0) console.log(`gateway stderr (tail):\n${gateway.stderrTail()}`);
}

/** The soak's criteria, each with what was measured. */
export function criteria(run: SoakRun): Verdict[] {
  const { tally, records, gateway } = run;
  const crashes = gateway.lifetimes.filter((lifetime) => lifetime.end === "crashed").length;
  const longest = longestLifetime(gateway.lifetimes);
  const drift = rssDrift(longest);
  const healthz = run.halfOpenPhases.flatMap((phase) => phase.healthz);
  const healthzFailures = sum(run.halfOpenPhases, (phase) => phase.healthzFailures);
  return [
    {
      name: "0 gateway 5xx on valid calls",
      measured: `${tally.valid.status5xx} 5xx and ${tally.valid.errorEvents} stream error events in ${tally.valid.calls} valid calls (${tally.faultStatus5xx} 5xx on injected faults and ${tally.cutByKill} requests cut by kills, apart)`,
      pass: tally.valid.status5xx === 0 && tally.valid.errorEvents === 0,
    },
    {
      name: "0 crashes (exits other than the soak's kills)",
      measured: `${crashes} crashes in ${gateway.lifetimes.length} processes; ${run.kills.length} kills; final SIGTERM: ${run.stopExit}`,
      pass: crashes === 0 && run.stopExit === "code 0",
    },
    {
      name: "0 records missing for 200 answers whose response ended",
      measured: `${records.missingWhole.length} of ${records.whole.length} missing${records.missingWhole.length === 0 ? "" : ` (${byKind(records.missingWhole)})`}`,
      pass: records.missingWhole.length === 0 && records.whole.length > 0,
    },
    {
      name: "RSS drift under 10 % after the first minute, minute means (longest process)",
      measured:
        drift === undefined
          ? "no samples"
          : `gateway #${longest.index}, ${seconds((longest.endedAt ?? run.now) - longest.startedAt)}: mean ${fixed(drift.baseline)} MiB in the ${fixed(drift.baselineAge, 0)} s after the first ${fixed(drift.baselineAge, 0)} s → mean ${fixed(drift.last)} MiB in the last ${fixed(drift.baselineAge, 0)} s (${fixed(drift.drift * 100)} %)`,
      pass: drift !== undefined && drift.drift < 0.1,
    },
    {
      name: "/healthz answers during the half-open phases",
      measured: `${healthz.length} probes: p50 ${fixed(percentile(healthz, 50))} ms, p99 ${fixed(percentile(healthz, 99))} ms, max ${fixed(percentile(healthz, 100))} ms; ${healthzFailures} failed`,
      pass: healthzFailures === 0 && healthz.length > 0,
    },
  ];
}

const redirectKinds = ["redirect-301", "redirect-302", "redirect-307", "redirect-308"];
/** The 5xx answers README documents for a failed upstream: `upstream` 502, `worker` 503, `timeout` 504. */
const documented5xx = ["502 upstream", "503 worker", "504 timeout"];
const upstreamFailed = (kind: string) => kind.startsWith("fault-") || kind.startsWith("redirect-") || kind === "hang";

/** Every 5xx by status and class, and those that are not a documented upstream failure of a faulted call. */
function serverErrors(tally: Tally): { byAnswer: string; undocumented: string[] } {
  const byAnswer = new Map<string, number>();
  const undocumented: string[] = [];
  for (const [key, value] of tally.serverErrors) {
    const [kind = "", answer = ""] = key.split(" → ");
    byAnswer.set(answer, (byAnswer.get(answer) ?? 0) + value);
    if (!upstreamFailed(kind) || !documented5xx.includes(answer)) undocumented.push(`${key} × ${value}`);
  }
  return { byAnswer: [...byAnswer].map(([answer, value]) => `${answer} × ${value}`).join(", "), undocumented };
}
const validKinds = ["accepted", "accepted-stream", "slow-stream", "slow-stream-late-end", "large-schema"];

/** The further checks of the adversarial mix. */
export function checks(run: SoakRun): Verdict[] {
  const { tally, records, gateway, flood } = run;
  const wrong = (...kinds: string[]) => sum(kinds, (kind) => tally.wrong.get(kind) ?? 0);
  const total = (...kinds: string[]) =>
    sum([...tally.byClass], ([key, value]) => (kinds.some((kind) => key.startsWith(`${kind} `)) ? value : 0));
  const outlived = sum(run.halfOpenPhases, (phase) => phase.outlived);
  const counts = gateway.counts();
  const floodsWrong = wrong("flood-unauthenticated", "flood-authenticated");
  const fiveHundreds = serverErrors(tally);
  const longest = longestLifetime(gateway.lifetimes);
  const drift = rssDrift(longest);
  return [
    {
      // The end alone can hide a growth that a restart inside the process undid: the schema compiler's worker
      // thread is replaced when it reaches its 1 GiB heap limit, so a peak below that says it never did. Compiling a
      // 100,000-character schema takes a few hundred MiB for a moment, so the peak is bounded, not flat.
      name: "RSS peak after the first minute under 1 GiB (longest process)",
      measured:
        drift === undefined
          ? "no samples"
          : `gateway #${longest.index}: sampled peak ${fixed(drift.peak)} MiB (${fixed(drift.peakDrift * 100)} % over ${fixed(drift.baseline)} MiB)`,
      pass: drift !== undefined && drift.peak < 1024,
    },
    {
      name: "5xx only as documented upstream failures of faulted calls",
      measured: `${fiveHundreds.byAnswer || "none"}; ${fiveHundreds.undocumented.join(", ") || "none"} otherwise`,
      pass: fiveHundreds.undocumented.length === 0,
    },
    {
      name: "valid calls answered unless a kill cut them",
      measured: `${tally.valid.unanswered} unanswered of ${tally.valid.calls}; ${wrong(...validKinds)} not as expected`,
      pass: tally.valid.unanswered === 0 && wrong(...validKinds) === 0,
    },
    {
      name: "recursive schema: 400 INVALID_REQUEST, no 5xx, no hang",
      measured: `${wrong("recursive-schema")} of ${total("recursive-schema")} otherwise`,
      pass: wrong("recursive-schema") === 0,
    },
    {
      name: "large schemas: 200 within the cap, 400 above it",
      measured: `${wrong("large-schema")} of ${total("large-schema")} and ${wrong("large-schema-over-cap")} of ${total("large-schema-over-cap")} otherwise`,
      pass: wrong("large-schema", "large-schema-over-cap") === 0,
    },
    {
      name: "redirects: 502 upstream without location; target never contacted",
      measured: `${wrong(...redirectKinds)} of ${total(...redirectKinds)} otherwise; target contacted ${run.redirectTargetHits} times`,
      pass: wrong(...redirectKinds) === 0 && run.redirectTargetHits === 0,
    },
    {
      name: "oversize, invalid and window-breaking bodies refused as expected",
      measured: `${wrong("oversize", "invalid-json", "invalid-utf8", "window", "hang")} of ${total("oversize", "invalid-json", "invalid-utf8", "window", "hang")} otherwise`,
      pass: wrong("oversize", "invalid-json", "invalid-utf8", "window", "hang") === 0,
    },
    {
      name: "header floods: 401 (no key) / 400 (key), nothing stored",
      measured: `${floodsWrong} otherwise; ${records.recordedUnauthenticated} of ${tally.unrecorded.length} unauthenticated recorded; ${run.overlongLabels} records with a label over 256; burst of 2,000: rows ${flood.rowsBefore} → ${flood.rowsAfter}`,
      pass:
        floodsWrong === 0 &&
        records.recordedUnauthenticated === 0 &&
        run.overlongLabels === 0 &&
        flood.rowsAfter === flood.rowsBefore,
    },
    {
      name: "half-open sockets closed by the header timeout",
      measured: `${outlived} of ${run.halfOpenPhases.length * run.halfOpenSockets} outlived 15 s`,
      pass: outlived === 0,
    },
    {
      name: "other answers whose response ended have their record",
      measured: `${records.missingOthers.length} of ${records.others.length} missing${records.missingOthers.length === 0 ? "" : ` (${byKind(records.missingOthers)})`}`,
      pass: records.missingOthers.length === 0,
    },
    {
      name: "no internal error logged, no record lost on write",
      measured: `${counts.internalErrors} internal errors, ${counts.recordFailures} records not stored`,
      pass: counts.internalErrors === 0 && counts.recordFailures === 0,
    },
  ];
}

/**
 * Calls in flight at a kill, counted apart and not judged. A stream whose final event a client had
 * read before a kill broke its connection holds the whole answer; its record exists only if the
 * gateway committed it before the kill (relayStream holds the final event for its record only when
 * the provider ends its stream within one turn of the event loop of it).
 */
export function inFlightAtKills(run: SoakRun): string {
  const { records, tally } = run;
  const recordedAfterFinal = records.finalEventAtKill.length - records.missingFinalEventAtKill.length;
  return (
    `${tally.cutByKill} requests cut before their answer was whole (${records.cutWithRef} had a response head with a ref, ${records.cutWithRecord} of those have a record); ` +
    `${records.finalEventAtKill.length} streams cut after the client had read their final event, ${recordedAfterFinal} of them recorded` +
    (records.missingFinalEventAtKill.length === 0
      ? ""
      : ` (without a record: ${byKind(records.missingFinalEventAtKill)})`)
  );
}
