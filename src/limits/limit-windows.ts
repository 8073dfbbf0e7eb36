import type { LimitName } from "../policy/policy.js";

/** What a limit counts: calls, characters (`conservative_total_chars`), provider tokens, or calls in flight. */
export type LimitKind = "requests" | "chars" | "tokens" | "concurrent";

const minute = 60_000;
const hour = 60 * minute;
export const dayMs = 24 * hour;

/**
 * How a limit's window runs: `fixed` windows of `spanMs` aligned to the UTC epoch (the minute, the hour, the day);
 * `days`: the current UTC day and the days before it, `days` in all, counted per day; `inFlight`: calls from their
 * start until they end, counted per slot of their start (`inFlightSlotMs`) and read back as far as a call may last.
 */
export type WindowShape = { kind: "fixed"; spanMs: number } | { kind: "days"; days: number } | { kind: "inFlight" };

export interface LimitWindow {
  name: LimitName;
  counts: LimitKind;
  shape: WindowShape;
  /**
   * Whether a call it refuses gets `RATE_LIMITED` (a short window, or calls in flight: retry soon) rather than
   * `BUDGET_EXHAUSTED` (a day's or thirty days' characters or tokens).
   */
  rate: boolean;
}

const fixed = (spanMs: number): WindowShape => ({ kind: "fixed", spanMs });

/** Every limit over time, in the order of contract section 10. */
export const limitWindows: readonly LimitWindow[] = [
  { name: "requests_per_minute", counts: "requests", shape: fixed(minute), rate: true },
  { name: "requests_per_hour", counts: "requests", shape: fixed(hour), rate: true },
  { name: "requests_per_day", counts: "requests", shape: fixed(dayMs), rate: true },
  { name: "chars_per_minute", counts: "chars", shape: fixed(minute), rate: true },
  { name: "chars_per_hour", counts: "chars", shape: fixed(hour), rate: true },
  { name: "chars_per_day", counts: "chars", shape: fixed(dayMs), rate: false },
  { name: "chars_per_30_days", counts: "chars", shape: { kind: "days", days: 30 }, rate: false },
  { name: "tokens_per_day", counts: "tokens", shape: fixed(dayMs), rate: false },
  { name: "tokens_per_30_days", counts: "tokens", shape: { kind: "days", days: 30 }, rate: false },
  { name: "concurrent", counts: "concurrent", shape: { kind: "inFlight" }, rate: true },
];

/**
 * The length of the slots calls in flight are counted in: a call whose end is never counted (its node stopped) holds
 * its place until its deadline passes, and at most this much longer.
 */
export const inFlightSlotMs = 10_000;

/** The bucket `now` falls in: a fixed window's index, a day's, or a slot of calls in flight. */
export function bucketOf(shape: WindowShape, now: number): number {
  if (shape.kind === "fixed") return Math.floor(now / shape.spanMs);
  return Math.floor(now / (shape.kind === "days" ? dayMs : inFlightSlotMs));
}

/** Where a bucket starts (epoch ms). */
export function bucketStart(shape: WindowShape, bucket: number): number {
  if (shape.kind === "fixed") return bucket * shape.spanMs;
  return bucket * (shape.kind === "days" ? dayMs : inFlightSlotMs);
}

/**
 * How many buckets before the current one a window reads at `now`: none for a fixed window, the days before today for
 * a window of days, and for calls in flight the slots a call that may still be in flight (its deadline `leaseMs` not
 * passed) started in.
 */
export function earlierBuckets(shape: WindowShape, now: number, leaseMs: number): number {
  if (shape.kind === "fixed") return 0;
  if (shape.kind === "days") return shape.days - 1;
  return bucketOf(shape, now) - bucketOf(shape, now - leaseMs);
}

/** When a counter of `bucket` is read for the last time: after its window, and after every window it is part of. */
export function bucketExpires(shape: WindowShape, bucket: number, leaseMs: number): number {
  if (shape.kind === "fixed") return bucketStart(shape, bucket + 1);
  if (shape.kind === "days") return bucketStart(shape, bucket + shape.days);
  return bucketStart(shape, bucket + 1) + leaseMs;
}

/**
 * Milliseconds from `now` until a window of counts `used` (by bucket, the current one last, `used.length` buckets in
 * all) has room for `amount` more under `limit`, as its oldest buckets fall out of it and no more is charged; for a
 * fixed window, until it ends. Where no such time comes (the amount alone is over the limit), the whole window's span.
 */
export function msUntilRoom(
  shape: WindowShape,
  now: number,
  used: readonly number[],
  amount: number,
  limit: number,
): number {
  if (shape.kind === "fixed") return msUntilNextBucket(shape, now);
  const current = bucketOf(shape, now);
  let total = used.reduce((sum, count) => sum + count, 0);
  for (let dropped = 0; dropped < used.length; dropped++) {
    total -= used[dropped] as number;
    if (total + amount <= limit) return bucketStart(shape, current + 1 + dropped) - now;
  }
  return bucketStart(shape, current + used.length) - now;
}

/** Milliseconds from `now` until the next bucket starts: a fixed window's end, or the next day of a window of days. */
export function msUntilNextBucket(shape: WindowShape, now: number): number {
  return bucketStart(shape, bucketOf(shape, now) + 1) - now;
}
