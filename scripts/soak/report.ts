import type { Lifetime } from "./gateway-child.js";

/** The `p`-th percentile (0–100) of `values`, or NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * RSS over one gateway process's life: the mean of its samples in the minute after the first (or in the second
 * quarter of a shorter life), the mean of its last minute's (or quarter's), and its peak since the first. RSS
 * saw-tooths by a few hundred MiB as large schemas compile; two single samples would measure the tooth, not a growth.
 */
export interface RssDrift {
  lifetime: Lifetime;
  /** Where the baseline window starts, in seconds of the process's life. */
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
  const start = lifetime.startedAt;
  const end = lifetime.endedAt ?? lifetime.rss.at(-1)?.at ?? start;
  const windowMs = Math.min(60_000, (end - start) / 4);
  const settled = start + windowMs;
  const mean = (samples: readonly { mib: number }[]) => samples.reduce((sum, { mib }) => sum + mib, 0) / samples.length;
  const first = lifetime.rss.filter(({ at }) => at >= settled && at < settled + windowMs);
  const last = lifetime.rss.filter(({ at }) => at >= end - windowMs);
  if (first.length === 0 || last.length === 0 || end - windowMs < settled + windowMs) return undefined;
  const baseline = mean(first);
  const peak = Math.max(...lifetime.rss.filter(({ at }) => at >= settled).map(({ mib }) => mib));
  return {
    lifetime,
    baselineAge: windowMs / 1000,
    baseline,
    last: mean(last),
    peak,
    drift: mean(last) / baseline - 1,
    peakDrift: peak / baseline - 1,
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
