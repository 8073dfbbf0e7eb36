import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import type { CallOutcome, OracleGateway } from "./harness.js";
import { type Built, build, type Case, caseArb, containsString, type SurfaceSpec } from "./insert.js";
import { type Json, oracleCount } from "./oracle.js";

/** The limit of investigation.bounded. */
export const BOUNDED_LIMIT = 20_000;

export interface RunSettings {
  numRuns: number;
  /** Share of the cases also sent to investigation.bounded. */
  boundedShare: number;
  seed?: number;
  /**
   * Collect every failure instead of stopping at the first (ORACLE_COLLECT=1): for surveying
   * distinct bugs; the properties themselves run with this off, so fast-check shrinks.
   */
  collect?: boolean;
}

export interface Failure {
  property: string;
  category: string;
  path: string;
  message: string;
  shown: string;
  sLength: number;
}

export interface Stats {
  runs: number;
  /** Per category: how the measuring policy answered (accepted, or the error code). */
  outcomes: Record<string, Record<string, number>>;
  boundedSent: number;
  boundedOutcomes: Record<string, number>;
  /** The tightest case of (ii): known-key slack minus the oracle's excess over the provider total. */
  tightest: { margin: number; excess: number; slack: number; category: string } | undefined;
  failures: Failure[];
}

function bump(table: Record<string, number>, key: string): void {
  table[key] = (table[key] ?? 0) + 1;
}

function describeOutcome(outcome: CallOutcome): string {
  if (outcome.received) return outcome.status < 300 ? "accepted" : `sent-then-${outcome.status}`;
  return outcome.code ?? `status-${outcome.status}`;
}

/** Indices of a path as `*`, so that failures group by the shape of where S went. */
function pathShape(path: Built["path"]): string {
  return path.map((segment) => (typeof segment === "number" ? "*" : segment)).join(".");
}

class PropertyFailure extends Error {}

/**
 * What a property sends: S as a string to both policies (`string`); S as a long number literal to the
 * measuring policy (`number`), or to investigation.bounded only and always over its limit (`number-bounded`).
 */
export type Mode = "string" | "number" | "number-bounded";

/** Runs the properties of one surface; throws the (shrunk) counterexample unless collecting. */
export async function runSurfaceProperties(
  spec: SurfaceSpec,
  gateway: OracleGateway,
  settings: RunSettings,
  mode: Mode = "string",
): Promise<Stats> {
  const stats: Stats = {
    runs: 0,
    outcomes: {},
    boundedSent: 0,
    boundedOutcomes: {},
    tightest: undefined,
    failures: [],
  };

  const check = async (testCase: Case): Promise<void> => {
    const built = build(spec, testCase);
    const sChars = testCase.s.length;
    const problems: Array<[string, string]> = [];
    const outcome =
      mode === "number-bounded"
        ? {
            status: 0,
            code: "not-sent",
            received: undefined,
            provider: undefined,
            preflight: undefined,
            otherFields: undefined,
          }
        : await gateway.send(spec.name, "oracle.measure", built.text);
    const kind = outcome.code === "not-sent" ? "not-sent" : describeOutcome(outcome as CallOutcome);

    if (built.duplicate) {
      if (outcome.status !== 400 || outcome.code !== "INVALID_REQUEST" || outcome.received)
        problems.push([
          "duplicate-key-refused",
          `a body with a duplicate key got ${outcome.status} ${outcome.code ?? ""}, upstream ${outcome.received ? "RECEIVED it" : "received nothing"}`,
        ]);
    } else if (outcome.received) {
      const provider = outcome.provider;
      const preflight = outcome.preflight;
      if (!provider) problems.push(["provider-check-recorded", "the call was sent but has no provider check recorded"]);
      let sent: Json | undefined;
      try {
        sent = JSON.parse(outcome.received.body) as Json;
      } catch {
        problems.push(["sent-body-json", "the upstream received a body that is not JSON"]);
      }
      if (provider && sent !== undefined && built.category === "number") {
        // (iii): a number literal the upstream receives verbatim is measured as sent, not as its parsed value.
        if (outcome.received.body.includes(testCase.s.text) && provider.total_chars < sChars)
          problems.push([
            "(iii) number literal measured as sent",
            `the upstream received a ${sChars}-character number literal verbatim; provider total_chars ${provider.total_chars}`,
          ]);
      } else if (provider && sent !== undefined) {
        const sInSent = built.encoded || containsString(sent, testCase.s.text);
        // (i): S is counted by the provider check. Where the gateway may rewrite S away (Gemini's
        // projected schema), S must still be counted by the preflight, and by the provider check when sent.
        if (sInSent) {
          if (provider.total_chars < sChars)
            problems.push([
              "(i) provider total >= S",
              `provider total_chars ${provider.total_chars} < S ${sChars} code points`,
            ]);
        } else if (built.rewritten) {
          if (!preflight || preflight.total_chars < sChars)
            problems.push([
              "(i) preflight total >= S (S rewritten away)",
              `preflight total_chars ${preflight?.total_chars} < S ${sChars}`,
            ]);
        } else {
          problems.push([
            "S sent as measured",
            `S is not in the body the upstream received (provider total_chars ${provider.total_chars})`,
          ]);
        }
      }
      if (provider && sent !== undefined) {
        // (ii): what the oracle counts in the sent body exceeds the provider's total by at most the known keys.
        const oracle = oracleCount(sent, spec.rules);
        const excess = oracle.chars - provider.total_chars;
        const margin = oracle.knownKeyChars - excess;
        if (!stats.tightest || margin < stats.tightest.margin)
          stats.tightest = { margin, excess, slack: oracle.knownKeyChars, category: built.category };
        if (excess > oracle.knownKeyChars)
          problems.push([
            "(ii) oracle - provider <= known keys",
            `oracle counts ${oracle.chars}, provider total_chars ${provider.total_chars}, excess ${excess} > known-key slack ${oracle.knownKeyChars}; provider check ${JSON.stringify(provider)}; other_fields ${JSON.stringify(outcome.otherFields ?? [])}`,
          ]);
      }
    }

    if (testCase.bounded && mode !== "number") {
      const bounded = await gateway.send(spec.name, "investigation.bounded", built.text);
      stats.boundedSent++;
      bump(stats.boundedOutcomes, describeOutcome(bounded));
      const sentS =
        bounded.received && (built.category !== "number" || bounded.received.body.includes(testCase.s.text));
      if (sentS && sChars > BOUNDED_LIMIT)
        problems.push([
          "bounded never sends S > limit",
          `investigation.bounded sent a call with S of ${sChars} code points upstream (status ${bounded.status}, preflight ${bounded.preflight?.total_chars}, provider ${bounded.provider?.total_chars})`,
        ]);
      if (built.duplicate && bounded.received)
        problems.push(["duplicate-key-refused", "investigation.bounded sent a body with a duplicate key"]);
    }

    stats.runs++;
    stats.outcomes[built.category] = stats.outcomes[built.category] ?? {};
    bump(stats.outcomes[built.category]!, kind);
    if (problems.length === 0) return;
    for (const [property, message] of problems)
      stats.failures.push({
        property,
        category: built.category,
        path: pathShape(built.path),
        message,
        shown: built.shown(),
        sLength: sChars,
      });
    if (!settings.collect)
      throw new PropertyFailure(
        `${problems.map(([property, message]) => `${property}: ${message}`).join("\n")}\n` +
          `category ${built.category}, S at ${JSON.stringify(built.path)} (${sChars} code points), measuring policy answered ${kind}\n` +
          `body: ${built.shown()}`,
      );
  };

  const cases =
    mode === "string"
      ? caseArb(spec, settings.boundedShare)
      : caseArb(spec, settings.boundedShare, "number", mode === "number-bounded");
  await fc.assert(fc.asyncProperty(cases, check), {
    numRuns: settings.numRuns,
    seed: settings.seed,
    endOnFailure: false,
  });
  return stats;
}

/** The failures grouped by property, category and shape of the path, each with its shortest body. */
export function groupFailures(failures: Failure[]): Array<Failure & { count: number }> {
  const groups = new Map<string, Failure & { count: number }>();
  for (const failure of failures) {
    const key = `${failure.property}|${failure.category}|${failure.path}`;
    const known = groups.get(key);
    if (!known) groups.set(key, { ...failure, count: 1 });
    else {
      known.count++;
      if (failure.shown.length < known.shown.length) Object.assign(known, { ...failure, count: known.count });
    }
  }
  return [...groups.values()];
}

/** Settings from the environment: ORACLE_RUNS, ORACLE_SEED, ORACLE_COLLECT. */
export function settingsFromEnvironment(defaultRuns: number): RunSettings {
  const runs = Number(process.env.ORACLE_RUNS ?? defaultRuns);
  const seed = process.env.ORACLE_SEED === undefined ? undefined : Number(process.env.ORACLE_SEED);
  return { numRuns: runs, boundedShare: 0.5, seed, collect: process.env.ORACLE_COLLECT === "1" };
}

/** Writes the run's report to $ORACLE_REPORT/<surface>.json when set; returns a one-line summary. */
export function report(surface: string, milliseconds: number, stats: Stats): string {
  const groups = groupFailures(stats.failures);
  const directory = process.env.ORACLE_REPORT;
  if (directory) {
    mkdirSync(directory, { recursive: true });
    writeFileSync(
      join(directory, `${surface}.json`),
      JSON.stringify({ surface, milliseconds, ...stats, failures: groups }, null, 1),
    );
  }
  return `${surface}: ${stats.runs} runs in ${milliseconds} ms, ${stats.boundedSent} also under investigation.bounded, ${stats.failures.length} failures in ${groups.length} groups; tightest (ii) ${JSON.stringify(stats.tightest)}; outcomes ${JSON.stringify(stats.outcomes)}`;
}

/** The property test of one surface, as each surface's file declares it. */
export async function surfaceProperty(
  spec: SurfaceSpec,
  gateway: OracleGateway,
  mode: Mode = "string",
): Promise<Stats> {
  const settings = settingsFromEnvironment(mode === "string" ? 10_000 : 1_000);
  if (mode !== "string" && process.env.ORACLE_NUMBER_RUNS) settings.numRuns = Number(process.env.ORACLE_NUMBER_RUNS);
  const started = Date.now();
  const stats = await runSurfaceProperties(spec, gateway, settings, mode);
  console.log(report(mode === "string" ? spec.name : `${spec.name}.${mode}`, Date.now() - started, stats));
  return stats;
}
