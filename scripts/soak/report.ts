import type { Lifetime } from "./gateway-child.js";

/** The `p`-th percentile (0–100) of `values`, or NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** RSS over one gateway process's life: its value after the first minute (or half its life, if shorter), its last and its peak since. */
export interface RssDrift {
  lifetime: Lifetime;
  baselineAge: number;
  baseline: number;
  last: number;
  peak: number;
  /** last / baseline − 1. */
  drift: number;
  /** peak / baseline − 1: a growth that something dropped again before the end shows here only. */
  peakDrift: number;
}

export function rssDrift(lifetime: Lifetime): RssDrift | undefined {
  const end = lifetime.endedAt ?? lifetime.rss.at(-1)?.at ?? lifetime.startedAt;
  const settleMs = Math.min(60_000, (end - lifetime.startedAt) / 2);
  const baseline = lifetime.rss.find((sample) => sample.at - lifetime.startedAt >= settleMs - 1_000);
  const last = lifetime.rss.at(-1);
  if (baseline === undefined || last === undefined || last === baseline) return undefined;
  const peak = Math.max(...lifetime.rss.filter((sample) => sample.at >= baseline.at).map((sample) => sample.mib));
  return {
    lifetime,
    baselineAge: (baseline.at - lifetime.startedAt) / 1000,
    baseline: baseline.mib,
    last: last.mib,
    peak,
    drift: last.mib / baseline.mib - 1,
    peakDrift: peak / baseline.mib - 1,
  };
}

/** The gateway process that ran longest. */
export function longestLifetime(lifetimes: readonly Lifetime[]): Lifetime {
  const span = (lifetime: Lifetime) => (lifetime.endedAt ?? Number.POSITIVE_INFINITY) - lifetime.startedAt;
  return lifetimes.reduce((longest, lifetime) => (span(lifetime) > span(longest) ? lifetime : longest));
}

/** One line of the final verdicts. */
export interface Verdict {
  name: string;
  measured: string;
  pass: boolean;
}

export function printVerdicts(title: string, verdicts: readonly Verdict[]): void {
  console.log(`\n${title}`);
  for (const verdict of verdicts) {
    console.log(`  ${verdict.pass ? "PASS" : "FAIL"}  ${verdict.name.padEnd(62)} ${verdict.measured}`);
  }
}

export function printClasses(byClass: ReadonlyMap<string, number>): void {
  for (const [key, value] of [...byClass].sort()) console.log(`    ${key.padEnd(60)} ${value}`);
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
export const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "–");
