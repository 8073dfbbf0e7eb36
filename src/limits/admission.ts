import { GatewayError } from "../errors/gateway-error.js";
import type { LimitName, Limits } from "../policy/policy.js";
import type { CounterChange, CounterCharge, CounterValue, LimitStore } from "../store/store.js";
import {
  bucketExpires,
  bucketOf,
  earlierBuckets,
  type LimitKind,
  type LimitWindow,
  limitWindows,
  msUntilNextBucket,
  msUntilRoom,
} from "./limit-windows.js";

/** Whose windows a set of limits counts in: e.g. a principal under a policy, or a key across its policies. */
export interface LimitScope {
  /** The counters' scope in the store (see `policyScope`, `keyScope`). */
  scope: string;
  limits: Limits;
}

/** The scope of a policy's limits for one principal: each principal has its own windows under the policy. */
export function policyScope(policyName: string, principal: string): string {
  return `policy:${policyName}:${principal}`;
}

/** The scope of a key's own limits, across every policy it uses. */
export function keyScope(keyId: string): string {
  return `key:${keyId}`;
}

/** A call to admit under its limits. */
export interface AdmissionRequest {
  scopes: readonly LimitScope[];
  /** The call's size as the provider check counts it (`conservative_total_chars`). */
  chars: number;
  /** Characters per token, to estimate the call's tokens before the provider reports them. */
  charsPerToken: number;
  /** How long the call may last (its deadline): how long it counts as in flight at most. */
  leaseMs: number;
  now: number;
}

/** How an admitted call ended, for its reservations: the tokens the provider reported, and whether it was cancelled. */
export interface AdmissionEnd {
  /** Input plus output tokens as the provider reported them; undefined when it reported none. */
  tokens: number | undefined;
  /** The client went away (or the call was cancelled) before the answer ended. */
  cancelled: boolean;
}

/** A call admitted under its limits: the headers its answer carries, and what its end gives back or reconciles. */
export interface Admission {
  headers: Readonly<Record<string, string>>;
  /** Reconciles the token windows with the reported usage and frees the call's place in flight. Once only. */
  end(how: AdmissionEnd): Promise<void>;
}

/** One limit that applies to a call: its window, its scope, its limit, and the bucket and earlier buckets it reads. */
interface Applied {
  window: LimitWindow;
  scope: string;
  limit: number;
  amount: number;
  bucket: number;
  /** How many buckets before the current one count in the window. */
  earlier: number;
  expires: number;
}

/** A call whose charge is refused this many times, each time with room found in every window (others took it), is refused. */
const attempts = 3;

/**
 * Admits a call when every window of its limits has room for it, charging each window at once; otherwise throws
 * `RATE_LIMITED` or `BUDGET_EXHAUSTED` (429) naming the window that refused, and charges nothing. Undefined when no
 * limit applies to the call.
 */
export async function admitCall(store: LimitStore, request: AdmissionRequest): Promise<Admission | undefined> {
  const tokens = Math.ceil(request.chars / request.charsPerToken);
  const amounts: Record<LimitKind, number> = { requests: 1, chars: request.chars, tokens, concurrent: 1 };
  const applied = appliedLimits(request.scopes, amounts, request.now, request.leaseMs);
  if (applied.length === 0) return undefined;
  for (let attempt = 1; ; attempt++) {
    const earlier = await earlierCounts(store, applied);
    const charges: CounterCharge[] = applied.map((limit, index) => ({
      scope: limit.scope,
      name: limit.window.name,
      bucket: limit.bucket,
      amount: limit.amount,
      cap: limit.limit - (earlier[index] as number),
      expires: limit.expires,
    }));
    const after = await store.chargeCounters(charges);
    if (after !== undefined) {
      const remaining = applied.map((limit, index) => ({
        limit,
        left: limit.limit - (earlier[index] as number) - (after[index]?.used ?? 0),
      }));
      return admitted(store, applied, remaining, tokens, request.now);
    }
    const refusal = await refusingLimit(store, applied, request.now, attempt === attempts);
    if (refusal !== undefined) throw refusal;
  }
}

/** Every limit of the scopes, with what a call of `amounts` adds to its window at `now`. */
function appliedLimits(
  scopes: readonly LimitScope[],
  amounts: Readonly<Record<LimitKind, number>>,
  now: number,
  leaseMs: number,
): Applied[] {
  const applied: Applied[] = [];
  for (const { scope, limits } of scopes) {
    for (const window of limitWindows) {
      const limit = limits[window.name];
      if (limit === undefined) continue;
      const bucket = bucketOf(window.shape, now);
      applied.push({
        window,
        scope,
        limit,
        amount: amounts[window.counts],
        bucket,
        earlier: earlierBuckets(window.shape, now, leaseMs),
        expires: bucketExpires(window.shape, bucket, leaseMs),
      });
    }
  }
  return applied;
}

/** What each bucket of a limit's window holds, oldest first, the current bucket last. */
function windowCounts(limit: Applied, values: readonly CounterValue[]): number[] {
  const counts = new Array<number>(limit.earlier + 1).fill(0);
  for (const value of values) {
    const at = value.bucket - (limit.bucket - limit.earlier);
    if (value.scope === limit.scope && value.name === limit.window.name && at >= 0 && at <= limit.earlier) {
      counts[at] = value.used;
    }
  }
  return counts;
}

/** The counters of every bucket of the limits' windows, the current ones included. */
function readWindows(store: LimitStore, applied: readonly Applied[]): Promise<CounterValue[]> {
  return store.readCounters(
    applied.map((limit) => ({
      scope: limit.scope,
      name: limit.window.name,
      from: limit.bucket - limit.earlier,
      to: limit.bucket,
    })),
  );
}

/** A window's use as the admin API shows it: its limit, what it has counted, and when it next has more room. */
export interface WindowStatus {
  window: LimitName;
  limit: number;
  used: number;
  /** When the window's current bucket ends (ISO 8601); null for calls in flight, which free their place as they end. */
  reset_at: string | null;
}

/** The use of every window of `scope`'s limits at `now` (calls in flight read back `leaseMs`). */
export async function windowStatus(
  store: LimitStore,
  scope: LimitScope,
  now: number,
  leaseMs: number,
): Promise<WindowStatus[]> {
  const applied = appliedLimits([scope], { requests: 0, chars: 0, tokens: 0, concurrent: 0 }, now, leaseMs);
  if (applied.length === 0) return [];
  const values = await readWindows(store, applied);
  return applied.map((limit) => ({
    window: limit.window.name,
    limit: limit.limit,
    used: windowCounts(limit, values).reduce((sum, count) => sum + count, 0),
    reset_at:
      limit.window.counts === "concurrent"
        ? null
        : new Date(now + msUntilNextBucket(limit.window.shape, now)).toISOString(),
  }));
}

/** Per applied limit, what its window's earlier buckets hold (0 for a fixed window). */
async function earlierCounts(store: LimitStore, applied: readonly Applied[]): Promise<number[]> {
  const reading = applied.filter((limit) => limit.earlier > 0);
  if (reading.length === 0) return applied.map(() => 0);
  const values = await store.readCounters(
    reading.map((limit) => ({
      scope: limit.scope,
      name: limit.window.name,
      from: limit.bucket - limit.earlier,
      to: limit.bucket - 1,
    })),
  );
  return applied.map((limit) =>
    limit.earlier === 0 ? 0 : windowCounts(limit, values).reduce((sum, count) => sum + count, 0),
  );
}

/**
 * The error of the window that refuses the call, read from the counters now: of several, the one with the longest
 * wait. When every window has room (another call's charge, since reconciled or released, took it): undefined, or
 * with `lastAttempt` the window with the least room, as it stands, to retry after a second.
 */
async function refusingLimit(
  store: LimitStore,
  applied: readonly Applied[],
  now: number,
  lastAttempt: boolean,
): Promise<GatewayError | undefined> {
  const values = await readWindows(store, applied);
  let refusal: { limit: Applied; used: number; waitMs: number } | undefined;
  let tightest: { limit: Applied; used: number } | undefined;
  for (const limit of applied) {
    const counts = windowCounts(limit, values);
    const used = counts.reduce((sum, count) => sum + count, 0);
    if (tightest === undefined || limit.limit - used < tightest.limit.limit - tightest.used) tightest = { limit, used };
    if (used + limit.amount <= limit.limit) continue;
    const waitMs =
      limit.window.counts === "concurrent"
        ? 1_000
        : msUntilRoom(limit.window.shape, now, counts, limit.amount, limit.limit);
    if (refusal === undefined || waitMs > refusal.waitMs) refusal = { limit, used, waitMs };
  }
  if (refusal !== undefined) return limitError(refusal.limit, refusal.used, refusal.waitMs);
  return lastAttempt && tightest !== undefined ? limitError(tightest.limit, tightest.used, 1_000) : undefined;
}

/** The 429 of a window that has no room: `RATE_LIMITED` or `BUDGET_EXHAUSTED`, with `Retry-After` in seconds. */
function limitError(limit: Applied, used: number, waitMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const name = limit.window.name;
  const detail = { window: name, limit: limit.limit, used, retry_after_seconds: seconds };
  if (limit.window.rate) {
    return new GatewayError("RATE_LIMITED", 429, `The ${name} limit is reached; retry after ${seconds} s.`, {
      limit: detail,
      retryAfterMs: seconds * 1000,
    });
  }
  return new GatewayError("BUDGET_EXHAUSTED", 429, `The ${name} budget is spent; it has room again in ${seconds} s.`, {
    limit: detail,
    headers: { "retry-after": String(seconds) },
  });
}

/** An admitted call: its headers, and its end's reconciliation. */
function admitted(
  store: LimitStore,
  applied: readonly Applied[],
  remaining: readonly { limit: Applied; left: number }[],
  estimate: number,
  now: number,
): Admission {
  let ended = false;
  return {
    headers: limitHeaders(remaining, now),
    async end({ tokens, cancelled }) {
      if (ended) return;
      ended = true;
      const changes: CounterChange[] = [];
      for (const limit of applied) {
        let amount = 0;
        if (limit.window.counts === "concurrent") amount = -1;
        else if (limit.window.counts === "tokens") {
          if (tokens !== undefined) amount = tokens - estimate;
          else if (cancelled) amount = -estimate;
        }
        if (amount === 0) continue;
        const { scope, bucket, expires } = limit;
        changes.push({ scope, name: limit.window.name, bucket, amount, expires });
      }
      if (changes.length > 0) await store.changeCounters(changes);
    },
  };
}

/**
 * The headers of an admitted call: OpenAI's `x-ratelimit-*` for the tightest window of requests and of tokens, and
 * `x-promptgate-remaining-chars` for the tightest of characters, each counted after this call.
 */
function limitHeaders(remaining: readonly { limit: Applied; left: number }[], now: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const tightest = (kind: LimitKind) => {
    let found: { limit: Applied; left: number } | undefined;
    for (const entry of remaining) {
      if (entry.limit.window.counts === kind && (found === undefined || entry.left < found.left)) found = entry;
    }
    return found;
  };
  for (const kind of ["requests", "tokens"] as const) {
    const found = tightest(kind);
    if (found === undefined) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(found.limit.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(Math.max(0, found.left));
    headers[`x-ratelimit-reset-${kind}`] = resetText(msUntilNextBucket(found.limit.window.shape, now));
  }
  const chars = tightest("chars");
  if (chars !== undefined) headers["x-promptgate-remaining-chars"] = String(Math.max(0, chars.left));
  return headers;
}

/** A duration as OpenAI writes its reset headers: `20ms`, `1s`, `6m0s`, `1h2m3s`. */
export function resetText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const total = Math.ceil(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
