import type { SqlStatement, SqlValue } from "./sql-statement.js";
import type { CounterChange, CounterCharge, CounterKey, CounterRange, CounterValue } from "./store.js";

// The counters of limits over time (`LimitStore`) in SQL, one code path for SQLite, D1 and PostgreSQL. The table is
// that of migrations/0010_limit_counters.sql (and its PostgreSQL twin): one row per (scope, name, bucket), whose
// `used` never exceeds its `cap` (a CHECK). A charge is one multi-row upsert: a row it would push past the cap its
// charge gives fails the CHECK, and the engine undoes the whole statement (SQLite's and D1's default ABORT, a
// PostgreSQL statement's atomicity), so that a charge is all or none without a transaction of its own. On
// PostgreSQL the upsert's row locks make concurrent charges of one counter take turns, each checking the row as the
// one before it left it; SQLite writes one statement at a time per database.

/** The parameters a counter's row of an upsert binds, and a range of a read. */
const parametersPerRow = 6;
const parametersPerRange = 4;

/** The most ranges one read names: their ORs nest, and D1 refuses an expression deeper than 100. */
const rangesPerRead = 20;

/** The items in groups of at most `size` (at least one a group). */
function groupsOf<Item>(items: readonly Item[], size: number): Item[][] {
  const per = Math.max(1, Math.floor(size));
  const groups: Item[][] = [];
  for (let start = 0; start < items.length; start += per) groups.push(items.slice(start, start + per));
  return groups;
}

/** The columns of a counter's row, in the order the upserts give them. */
const columns = "scope, name, bucket, used, cap, expires_at";

/** The later of the kept expiry and the one given (`excluded`), in SQL both engines speak. */
const laterExpiry =
  "CASE WHEN excluded.expires_at > limit_counters.expires_at THEN excluded.expires_at ELSE limit_counters.expires_at END";

function checkInteger(value: number, what: string): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`A limit counter's ${what} must be an integer, not ${value}.`);
}

function checkKey(key: CounterKey): void {
  checkInteger(key.bucket, "bucket");
}

/** One order of counters, the same whatever the engine's collation: by scope, then name (code units), then bucket. */
export function compareKeys(a: CounterKey, b: CounterKey): number {
  if (a.scope !== b.scope) return a.scope < b.scope ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.bucket - b.bucket;
}

/** A counter's key as one string no separator can make collide with another's. */
export function counterKeyText(key: CounterKey): string {
  return JSON.stringify([key.scope, key.name, key.bucket]);
}

/**
 * The charges with one per counter, in one order (by scope, name, bucket): the charges of one counter summed, under
 * the smallest of their caps (the counter must end within each), with the latest of their expiries. The order keeps
 * two concurrent charges of the same counters from locking them in opposite orders (a deadlock on PostgreSQL), and
 * one per counter is what PostgreSQL's upsert requires (it refuses to change a row twice in one statement).
 */
export function mergedCharges(charges: readonly CounterCharge[]): CounterCharge[] {
  const merged = new Map<string, CounterCharge>();
  for (const charge of charges) {
    checkKey(charge);
    checkInteger(charge.amount, "amount");
    checkInteger(charge.cap, "cap");
    checkInteger(charge.expires, "expiry");
    const key = counterKeyText(charge);
    const known = merged.get(key);
    merged.set(
      key,
      known === undefined
        ? { ...charge }
        : {
            ...known,
            amount: known.amount + charge.amount,
            cap: Math.min(known.cap, charge.cap),
            expires: Math.max(known.expires, charge.expires),
          },
    );
  }
  return [...merged.values()].sort(compareKeys);
}

/** The changes with one per counter, summed, with the latest expiry, in the order of `mergedCharges`. */
export function mergedChanges(changes: readonly CounterChange[]): CounterChange[] {
  const merged = new Map<string, CounterChange>();
  for (const change of changes) {
    checkKey(change);
    checkInteger(change.amount, "amount");
    checkInteger(change.expires, "expiry");
    const key = counterKeyText(change);
    const known = merged.get(key);
    merged.set(
      key,
      known === undefined
        ? { ...change }
        : { ...known, amount: known.amount + change.amount, expires: Math.max(known.expires, change.expires) },
    );
  }
  return [...merged.values()].sort(compareKeys);
}

/**
 * The statements of a charge (of `mergedCharges`, at least one), each binding at most `maxParameters`: one wherever
 * the engine binds enough (SQLite, PostgreSQL), several on D1 (100 a statement), to be run as one transaction. Each
 * adds its amounts and sets each counter's cap to the charge's; it fails the CHECK, changing nothing, when a counter
 * would exceed it. Each returns its counters' rows as it left them, in no particular order (see `chargedValues`).
 */
export function chargeStatements(charges: readonly CounterCharge[], maxParameters: number): SqlStatement[] {
  return groupsOf(charges, maxParameters / parametersPerRow).map((group) => {
    const values: SqlValue[] = [];
    for (const charge of group) {
      values.push(charge.scope, charge.name, charge.bucket, charge.amount, charge.cap, charge.expires);
    }
    return [
      `INSERT INTO limit_counters (${columns}) VALUES ${group.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")}
       ON CONFLICT (scope, name, bucket) DO UPDATE SET
         used = limit_counters.used + excluded.used, cap = excluded.cap, expires_at = ${laterExpiry}
       RETURNING scope, name, bucket, used`,
      values,
    ];
  });
}

/**
 * The statements of a change (of `mergedChanges`), none of which can fail the CHECK: what adds is one upsert that
 * raises each cap with its counter (a new counter's cap is its amount); what gives back (or adds nothing) is an
 * update per counter that stops at 0 and leaves a counter never charged absent.
 */
export function changeStatements(changes: readonly CounterChange[], maxParameters: number): SqlStatement[] {
  const statements: SqlStatement[] = [];
  const adding = changes.filter((change) => change.amount > 0);
  const raised = "limit_counters.used + excluded.used";
  for (const group of groupsOf(adding, maxParameters / parametersPerRow)) {
    const values: SqlValue[] = [];
    for (const change of group) {
      values.push(change.scope, change.name, change.bucket, change.amount, change.amount, change.expires);
    }
    statements.push([
      `INSERT INTO limit_counters (${columns}) VALUES ${group.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")}
       ON CONFLICT (scope, name, bucket) DO UPDATE SET
         used = ${raised},
         cap = CASE WHEN ${raised} > limit_counters.cap THEN ${raised} ELSE limit_counters.cap END,
         expires_at = ${laterExpiry}`,
      values,
    ]);
  }
  for (const change of changes) {
    if (change.amount > 0) continue;
    statements.push([
      `UPDATE limit_counters SET used = CASE WHEN used + ? > 0 THEN used + ? ELSE 0 END,
         expires_at = CASE WHEN expires_at < ? THEN ? ELSE expires_at END
       WHERE scope = ? AND name = ? AND bucket = ?`,
      [change.amount, change.amount, change.expires, change.expires, change.scope, change.name, change.bucket],
    ]);
  }
  return statements;
}

/** The reads of the counters in `ranges`, each binding at most `maxParameters`; an empty range is left out. */
export function counterReadStatements(ranges: readonly CounterRange[], maxParameters: number): SqlStatement[] {
  const wanted = ranges.filter((range) => {
    checkInteger(range.from, "bucket");
    checkInteger(range.to, "bucket");
    return range.from <= range.to;
  });
  return groupsOf(wanted, Math.min(rangesPerRead, maxParameters / parametersPerRange)).map((group) => [
    `SELECT scope, name, bucket, used FROM limit_counters
     WHERE ${group.map(() => "(scope = ? AND name = ? AND bucket >= ? AND bucket <= ?)").join(" OR ")}`,
    group.flatMap((range) => [range.scope, range.name, range.from, range.to]),
  ]);
}

/**
 * What a charge returns: for each charge as given, its counter's value after the whole charge (a counter charged twice
 * has one value, both charges added), from the counters `charged` holds in any order.
 */
export function chargedValues(charges: readonly CounterCharge[], charged: readonly CounterValue[]): CounterValue[] {
  const used = new Map(charged.map((counter) => [counterKeyText(counter), counter.used]));
  return charges.map(({ scope, name, bucket }) => {
    const value = used.get(counterKeyText({ scope, name, bucket }));
    if (value === undefined) throw new Error(`The charge of limit counter ${name} of ${scope} returned no value.`);
    return { scope, name, bucket, used: value };
  });
}

/** Counters read by several statements, each once, by scope, name and bucket. */
export function orderedCounters<Counter extends CounterKey>(counters: readonly Counter[]): Counter[] {
  const unique = new Map<string, Counter>();
  for (const counter of counters) unique.set(counterKeyText(counter), counter);
  return [...unique.values()].sort(compareKeys);
}

/**
 * Whether an error is a counter's CHECK failing (a charge past a cap): SQLITE_CONSTRAINT_CHECK from better-sqlite3,
 * SQLSTATE 23514 from PostgreSQL, "CHECK constraint failed" in the message of D1's error (or of its cause).
 */
export function isCapRefusal(error: unknown): boolean {
  for (let found = error, depth = 0; typeof found === "object" && found !== null && depth < 4; depth += 1) {
    const { code, message, cause } = found as { code?: unknown; message?: unknown; cause?: unknown };
    if (code === "SQLITE_CONSTRAINT_CHECK" || code === "23514") return true;
    if (typeof message === "string" && message.includes("CHECK constraint failed")) return true;
    found = cause;
  }
  return false;
}
