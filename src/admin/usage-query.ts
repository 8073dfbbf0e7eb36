import { invalidRequest } from "../errors/gateway-error.js";
import { fileKeyIdPattern } from "../keys/key-file.js";
import { teamPattern } from "../keys/key-settings.js";
import type { UsageQuery } from "../store/store.js";

/** The days usage covers when `from` is not given: the 30 before `to`. */
export const defaultUsageDays = 30;
/** The most days apart `from` and `to` may be. */
export const maxUsageDays = 400;

const dayMs = 86_400_000;

const parameters = ["key", "team", "from", "to"] as const;
type Parameter = (typeof parameters)[number];

// An ISO 8601 date, or a date and time in UTC or with an offset (what `Date.parse` reads the same everywhere).
// The end of year 9999: later times have no four-digit year, and would not compare with the records' times.
const maxTime = Date.parse("9999-12-31T23:59:59.999Z");

const timePattern = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/**
 * The usage a `GET /promptgate/admin/usage` query asks for: of one named key (`key`), of one team's keys (`team`),
 * of both where both are given, or of every key, for the calls that arrived from `from` until `to` (ISO 8601; by default the 30 days until `now`),
 * at most 400 days apart. Any parameter it does not know, gives twice or cannot take is a 400 INVALID_REQUEST whose
 * message names the parameter and what it takes, never the value given.
 */
export function usageQuery(search: URLSearchParams, now: Date): UsageQuery {
  const values = new Map<Parameter, string>();
  for (const [name, value] of search) {
    if (!isParameter(name)) {
      throw invalidRequest(`Unknown query parameter; the usage takes ${parameters.join(", ")}.`);
    }
    if (values.has(name)) throw invalidRequest(`The query parameter '${name}' is given more than once.`, name);
    values.set(name, value);
  }
  const key = values.get("key");
  if (key !== undefined && !fileKeyIdPattern.test(key)) {
    throw invalidRequest(
      "The query parameter 'key' must be the id of a named key (key_ and up to 64 letters, digits, _ or -).",
      "key",
    );
  }
  const team = values.get("team");
  if (team !== undefined && !teamPattern.test(team)) {
    throw invalidRequest(
      "The query parameter 'team' must be a team as keys name it (up to 64 letters, digits, _, . or -).",
      "team",
    );
  }
  const to = timeOf(values, "to") ?? now.getTime();
  const from = timeOf(values, "from") ?? to - defaultUsageDays * dayMs;
  if (from > to) throw invalidRequest("The query parameter 'from' must not be later than 'to'.", "from");
  if (to - from > maxUsageDays * dayMs) {
    throw invalidRequest(`The query parameters 'from' and 'to' must be at most ${maxUsageDays} days apart.`, "from");
  }
  const query: UsageQuery = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
  if (key !== undefined) query.key = key;
  if (team !== undefined) query.team = team;
  return query;
}

function isParameter(name: string): name is Parameter {
  return (parameters as readonly string[]).includes(name);
}

/** A time parameter as epoch milliseconds, undefined when not given. */
function timeOf(values: Map<Parameter, string>, name: "from" | "to"): number | undefined {
  const value = values.get(name);
  if (value === undefined) return undefined;
  const time = timePattern.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(time) || time < 0 || time > maxTime) {
    throw invalidRequest(
      `The query parameter '${name}' must be an ISO 8601 date or time, such as 2026-12-01 or 2026-12-01T00:00:00Z.`,
      name,
    );
  }
  return time;
}
