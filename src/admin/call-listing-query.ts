import { invalidRequest } from "../errors/gateway-error.js";
import { fileKeyIdPattern } from "../keys/key-file.js";
import { teamPattern } from "../keys/key-settings.js";
import type { CallDecision } from "../record/call-record.js";
import type { CallQuery } from "../store/store.js";
import { surfaces } from "../surfaces/surfaces.js";

/** Calls a page holds when `limit` is not given, and the most it may ask for. */
export const defaultCallLimit = 100;
export const maxCallLimit = 500;

/** Every decision a record may carry; a Record, so that a decision added to the type must be added here. */
const decisions: Record<CallDecision, true> = {
  sent: true,
  measured: true,
  rejected: true,
  failed: true,
  cancelled: true,
  queued: true,
  answered: true,
};

const parameters = [
  "case",
  "limit",
  "before",
  "after",
  "decision",
  "policy",
  "surface",
  "error",
  "key",
  "team",
] as const;
type Parameter = (typeof parameters)[number];

// As `x-promptgate-case` (pipeline/call-labels.ts): what a record's case can be.
const casePattern = /^[\x20-\x7e]{1,256}$/;
const refPattern = /^[A-Za-z0-9_-]{1,64}$/;
// A policy name (schemas/policy.schema.json), optionally pinned to a version by 12 to 64 hex digits.
const policyPattern = /^([a-z0-9][a-z0-9._-]{0,99})(?:@([0-9a-fA-F]{12,64}))?$/;
const errorPattern = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const limitPattern = /^[1-9][0-9]{0,2}$/;

/**
 * The listing a `GET /promptgate/admin/calls` query asks for. Without `case`: the latest calls, newest first,
 * paged with `before`; with `case`: the case's calls oldest first (as before listings existed), paged with
 * `after`. Any parameter the listing does not know, gives twice or cannot take is a 400 INVALID_REQUEST whose
 * message names the parameter and what it takes, never the value given.
 */
export function callListingQuery(search: URLSearchParams): CallQuery {
  const values = new Map<Parameter, string>();
  for (const [name, value] of search) {
    if (!isParameter(name)) {
      throw invalidRequest(`Unknown query parameter; the calls listing takes ${parameters.join(", ")}.`);
    }
    if (values.has(name)) throw invalidRequest(`The query parameter '${name}' is given more than once.`, name);
    values.set(name, value);
  }
  const caseId = checked(values, "case", casePattern, "1 to 256 printable ASCII characters");
  const order = caseId === undefined ? "newest" : "oldest";
  if (caseId === undefined && values.has("after")) {
    throw invalidRequest("Without 'case' the calls are listed newest first: page with 'before'.", "after");
  }
  if (caseId !== undefined && values.has("before")) {
    throw invalidRequest("With 'case' the calls are listed oldest first: page with 'after'.", "before");
  }
  const cursor = order === "newest" ? "before" : "after";
  const query: CallQuery = { order, limit: limitOf(values.get("limit")) };
  const after = checked(values, cursor, refPattern, "the ref of a call (the 'next' of the previous page)");
  if (after !== undefined) query.after = after;
  if (caseId !== undefined) query.case = caseId;
  const decision = values.get("decision");
  if (decision !== undefined) query.decision = decisionOf(decision);
  const policy = values.get("policy");
  if (policy !== undefined) query.policy = policyOf(policy);
  const surface = values.get("surface");
  if (surface !== undefined) query.surface = surfaceOf(surface);
  const error = checked(values, "error", errorPattern, "an error code such as INVESTIGATION_PROMPT_LIMIT or timeout");
  if (error !== undefined) query.error = error;
  const key = checked(
    values,
    "key",
    fileKeyIdPattern,
    "the id of a named key (key_ and up to 64 letters, digits, _ or -)",
  );
  if (key !== undefined) query.key = key;
  const team = checked(values, "team", teamPattern, "a team as keys name it (up to 64 letters, digits, _, . or -)");
  if (team !== undefined) query.team = team;
  return query;
}

function isParameter(name: string): name is Parameter {
  return (parameters as readonly string[]).includes(name);
}

function checked(values: Map<Parameter, string>, name: Parameter, pattern: RegExp, takes: string) {
  const value = values.get(name);
  if (value !== undefined && !pattern.test(value)) {
    throw invalidRequest(`The query parameter '${name}' must be ${takes}.`, name);
  }
  return value;
}

function limitOf(value: string | undefined): number {
  if (value === undefined) return defaultCallLimit;
  const limit = limitPattern.test(value) ? Number(value) : Number.NaN;
  if (!(limit <= maxCallLimit)) {
    throw invalidRequest(`The query parameter 'limit' must be a whole number from 1 to ${maxCallLimit}.`, "limit");
  }
  return limit;
}

function isDecision(value: string): value is CallDecision {
  return Object.hasOwn(decisions, value);
}

function decisionOf(value: string): CallDecision {
  if (isDecision(value)) return value;
  const known = Object.keys(decisions).join(", ");
  throw invalidRequest(`The query parameter 'decision' must be one of ${known}.`, "decision");
}

/** A name as given; a pinned version as records hold it, `name@` and the first 12 hex digits in lower case. */
function policyOf(value: string): string {
  const match = policyPattern.exec(value);
  if (match === null) {
    throw invalidRequest(
      "The query parameter 'policy' must be a policy name, or a name pinned as name@<12 to 64 hex digits>.",
      "policy",
    );
  }
  const [, name, sha256] = match;
  return sha256 === undefined ? value : `${name}@${sha256.slice(0, 12).toLowerCase()}`;
}

function surfaceOf(value: string): string {
  const known = surfaces.find((surface) => surface.name === value);
  if (known !== undefined) return known.name;
  const names = surfaces.map((surface) => surface.name).join(", ");
  throw invalidRequest(`The query parameter 'surface' must be one of ${names}.`, "surface");
}
