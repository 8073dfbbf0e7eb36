import type { JsonObject } from "../../../simulated/json-value.js";

/** How long a cached content lives when its create names no expiry: one hour, as Gemini's default. */
export const defaultCacheLifetimeMs = 60 * 60 * 1000;

/** A protobuf Duration in JSON: whole seconds with up to nine fractional digits, then `s`. */
const durationPattern = /^(\d{1,12})(?:\.(\d{1,9}))?s$/;
/** An RFC 3339 timestamp as protobuf JSON writes it. */
const timestampPattern = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** The expiry a body asks for, as epoch milliseconds, or why Gemini would refuse it. */
export type RequestedExpiry = { expiresAt: number } | { problem: string };

/**
 * The expiry of a create or patch body: `ttl` ("300s") from `now`, or `expireTime`; never
 * both, and never in the past. `fallback` applies when the body names neither (a create's
 * default); without one, naming neither is a problem (a patch has nothing to change).
 */
export function requestedExpiry(body: JsonObject, now: number, fallback: number | undefined): RequestedExpiry {
  const { ttl, expireTime } = body;
  if (ttl !== undefined && expireTime !== undefined) {
    return { problem: "* CachedContent: only one of ttl and expire_time may be set" };
  }
  let expiresAt: number | undefined;
  if (ttl !== undefined) {
    const milliseconds = durationMilliseconds(ttl);
    if (milliseconds === undefined) return { problem: "* CachedContent.ttl: must be a duration such as '300s'" };
    expiresAt = now + milliseconds;
  } else if (expireTime !== undefined) {
    expiresAt = timestampMilliseconds(expireTime);
    if (expiresAt === undefined) return { problem: "* CachedContent.expire_time: must be an RFC 3339 timestamp" };
  } else if (fallback !== undefined) {
    expiresAt = fallback;
  } else {
    return { problem: "* CachedContent: one of ttl and expire_time must be set" };
  }
  if (expiresAt <= now) return { problem: "* CachedContent: the expiration must lie in the future" };
  return { expiresAt };
}

function durationMilliseconds(value: unknown): number | undefined {
  const match = typeof value === "string" ? durationPattern.exec(value) : null;
  if (match === null) return undefined;
  const nanoseconds = Number((match[2] ?? "").padEnd(9, "0"));
  return Number(match[1]) * 1000 + Math.round(nanoseconds / 1_000_000);
}

function timestampMilliseconds(value: unknown): number | undefined {
  const match = typeof value === "string" ? timestampPattern.exec(value) : null;
  if (match === null) return undefined;
  // Date.parse takes at most milliseconds reliably; finer digits are cut, as they change nothing here.
  const fraction = (match[2] ?? "").slice(0, 3).padEnd(3, "0");
  const milliseconds = Date.parse(`${match[1]}.${fraction}${match[3]}`);
  return Number.isFinite(milliseconds) ? milliseconds : undefined;
}
