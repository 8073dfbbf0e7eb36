import type { SqlStatement, SqlValue } from "./sql-statement.js";
import type { CallQuery } from "./store.js";

/**
 * The query's filters as columns of `calls` (migrations/0003_call_listing.sql, 0009_call_keys.sql), in the order
 * their index is preferred: a case holds a handful of calls, most calls have no error, a key's calls are fewer than
 * its team's, a policy or decision or surface has many.
 */
function filterColumns(query: CallQuery): Array<[column: string, value: string]> {
  const columns: Array<[string, string]> = [];
  if (query.case !== undefined) columns.push(["case_id", query.case]);
  if (query.error !== undefined) columns.push(["error", query.error]);
  if (query.key !== undefined) columns.push(["key_id", query.key]);
  if (query.team !== undefined) columns.push(["team", query.team]);
  if (query.policy !== undefined) columns.push([query.policy.includes("@") ? "policy" : "policy_name", query.policy]);
  if (query.decision !== undefined) columns.push(["decision", query.decision]);
  if (query.surface !== undefined) columns.push(["surface", query.surface]);
  return columns;
}

/**
 * The statement of one page of `query`, continuing after the call of `afterSeq`; it reads one record more than
 * the limit, to tell whether another page follows. Each filter column has an index ending in `seq`, so the first
 * filter's index yields the page in order and the search stops at the limit. Without statistics SQLite could lead
 * with any filter's index; a unary `+` keeps the others' indexes out of the choice, so the plan is the one above.
 */
export function callListingStatement(
  query: CallQuery,
  afterSeq: number | undefined,
  unindexed: (column: string) => string,
): SqlStatement {
  const newest = query.order === "newest";
  const conditions: string[] = [];
  const params: SqlValue[] = [];
  for (const [index, [column, value]] of filterColumns(query).entries()) {
    conditions.push(`${index === 0 ? column : unindexed(column)} = ?`);
    params.push(value);
  }
  if (afterSeq !== undefined) {
    conditions.push(newest ? "seq < ?" : "seq > ?");
    params.push(afterSeq);
  }
  const where = conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`;
  return [
    `SELECT record FROM calls${where} ORDER BY seq ${newest ? "DESC" : "ASC"} LIMIT ?`,
    [...params, query.limit + 1],
  ];
}
