import type { CallRecord } from "../record/call-record.js";
import type { SqlStatement, SqlValue } from "./sql-statement.js";
import type { UsageQuery, UsageRow } from "./store.js";

/**
 * The error codes of a call refused without a `rejected` decision: by the bindings of its named key, or by a limit
 * over time. Usage counts these among the rejected calls, beside the calls a check refused.
 */
export const refusalCodes: readonly string[] = [
  "POLICY_NOT_ALLOWED",
  "MODEL_NOT_ALLOWED",
  "RATE_LIMITED",
  "BUDGET_EXHAUSTED",
];

/** What a call record adds to its key's usage, as the stores keep it beside the record. */
export interface CallUsage {
  /** The id of the named key the call presented; undefined for an unnamed key or none. */
  keyId: string | undefined;
  team: string | undefined;
  /** Whether a check, a binding or a limit refused the call. */
  refused: boolean;
  /** The provider check's `conservative_total_chars` where the call was sent; undefined otherwise. */
  sentChars: number | undefined;
  tokensIn: number | undefined;
  tokensOut: number | undefined;
}

/**
 * Whether a call was sent to its provider: its decision is `sent`, or it failed or was cancelled after the provider
 * answered (it has an upstream status).
 */
export function wasSent(record: Pick<CallRecord, "decision" | "upstream_status">): boolean {
  return (
    record.decision === "sent" ||
    ((record.decision === "failed" || record.decision === "cancelled") && record.upstream_status !== undefined)
  );
}

/** What a record adds to the usage of its key. */
export function callUsageOf(record: CallRecord): CallUsage {
  return {
    keyId: record.key?.id,
    team: record.key?.team ?? undefined,
    refused: record.decision === "rejected" || (record.error !== undefined && refusalCodes.includes(record.error)),
    sentChars: wasSent(record) ? record.provider_check?.conservative_total_chars : undefined,
    tokensIn: record.usage?.input_tokens,
    tokensOut: record.usage?.output_tokens,
  };
}

/**
 * The statement summing the usage `query` selects, per key and UTC day, over the columns of `calls` the migrations
 * of schema version 9 add (`key_id`, `team`, `sent_chars`, `tokens_in`, `tokens_out`) and the listed `decision` and
 * `error`. Each filter has an index leading with its column and then `time`, so only the range is read.
 */
export function usageStatement(query: UsageQuery): SqlStatement {
  const conditions = ["key_id IS NOT NULL", "time >= ?", "time < ?"];
  const params: SqlValue[] = [query.from, query.to];
  if (query.key !== undefined) {
    conditions.push("key_id = ?");
    params.push(query.key);
  }
  if (query.team !== undefined) {
    conditions.push("team = ?");
    params.push(query.team);
  }
  const codes = refusalCodes.map((code) => `'${code}'`).join(", ");
  return [
    `SELECT substr(time, 1, 10) AS day, key_id, COUNT(*) AS calls,
       SUM(CASE WHEN decision = 'rejected' OR error IN (${codes}) THEN 1 ELSE 0 END) AS rejected,
       COALESCE(SUM(sent_chars), 0) AS chars, COALESCE(SUM(tokens_in), 0) AS tokens_in,
       COALESCE(SUM(tokens_out), 0) AS tokens_out
     FROM calls WHERE ${conditions.join(" AND ")}
     GROUP BY substr(time, 1, 10), key_id ORDER BY day, key_id`,
    params,
  ];
}

/** A row of the usage statement with its sums as numbers (a driver may hand a count over as a string or a bigint). */
export function usageRowOf(row: UsageRow): UsageRow {
  return {
    day: row.day,
    key_id: row.key_id,
    calls: Number(row.calls),
    rejected: Number(row.rejected),
    chars: Number(row.chars),
    tokens_in: Number(row.tokens_in),
    tokens_out: Number(row.tokens_out),
  };
}

/**
 * The usage of `records` that `query` selects, as the usage statement sums it: for a store that keeps its records in
 * memory.
 */
export function usageOfRecords(records: Iterable<{ time: string; usage: CallUsage }>, query: UsageQuery): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const { time, usage } of records) {
    const keyId = usage.keyId;
    if (keyId === undefined || time < query.from || time >= query.to) continue;
    if (query.key !== undefined && keyId !== query.key) continue;
    if (query.team !== undefined && usage.team !== query.team) continue;
    const day = time.slice(0, 10);
    const id = JSON.stringify([day, keyId]);
    let row = rows.get(id);
    if (row === undefined) {
      row = { day, key_id: keyId, calls: 0, rejected: 0, chars: 0, tokens_in: 0, tokens_out: 0 };
      rows.set(id, row);
    }
    row.calls += 1;
    if (usage.refused) row.rejected += 1;
    row.chars += usage.sentChars ?? 0;
    row.tokens_in += usage.tokensIn ?? 0;
    row.tokens_out += usage.tokensOut ?? 0;
  }
  return [...rows.values()].sort((a, b) => (a.day === b.day ? compare(a.key_id, b.key_id) : compare(a.day, b.day)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
