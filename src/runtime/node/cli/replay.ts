import { isUtf8 } from "node:buffer";
import { type Config, readConfig } from "../../../config.js";
import { GatewayError } from "../../../errors/gateway-error.js";
import { JsonScanner } from "../../../json/json-scanner.js";
import type { PolicyVersion } from "../../../policy/policy.js";
import type { PolicyRegistry } from "../../../policy/policy-registry.js";
import { type ModelTable, modelTableOf } from "../../../routing/model-table.js";
import { ajvSchemaCompiling } from "../../../schema/compile-schema.js";
import { createSchemaValidators } from "../../../schema/schema-validators.js";
import { surfaces } from "../../../surfaces/surfaces.js";
import { aggregateReplay, type ReplayAggregate } from "./replay-report.js";
import { type ReplayContext, type RequestReport, replayRequest } from "./replay-request.js";
import { type ReplayFile, readStoredRequests } from "./stored-requests.js";
import { UsageError } from "./usage-error.js";

/** What to replay, everything already read: no file, folder or network is touched. */
export interface ReplayOptions {
  /** `name` or `name@<12 to 64 hex digits>`, resolved as in a `/policies/{policyRef}/` URL. */
  policy: string;
  policies: PolicyRegistry;
  /** The named schemas of the schema folder, by name. */
  schemas: ReadonlyMap<string, unknown>;
  files: ReplayFile[];
  /** The model table of the policy folder; the shipped default when not given. */
  models?: ModelTable;
  /** The configuration (its keys decide what a routed call may use); the environment's defaults when not given. */
  config?: Config;
  /** Whether to add `aggregate`, the figures per policy and surface (`--report`). */
  aggregate?: boolean;
}

/** Options of `replayComparing`: those of `replay`, with several policies. */
export interface ComparingOptions extends Omit<ReplayOptions, "policy"> {
  /** Each as `ReplayOptions.policy`, and each a different version; the report keeps their order. */
  policy: readonly string[];
}

/** Counts over all replayed requests; the sizes are the preflight's `total_chars` of those measured. */
export interface ReplaySummary {
  count: number;
  passing: number;
  /** Refused by a window check (INVESTIGATION_PROMPT_LIMIT). */
  rejected: number;
  /** Refused for any other reason, e.g. INVALID_REQUEST. */
  invalid: number;
  /** Null when no request could be measured. */
  min_total_chars: number | null;
  max_total_chars: number | null;
}

/** The one JSON document `promptgate replay` prints for one policy. */
export interface ReplayReport {
  /** The resolved version, `name@` + 12 hex digits. */
  policy: string;
  files: string[];
  requests: RequestReport[];
  summary: ReplaySummary;
  /** Present when asked for (`--report`). */
  aggregate?: ReplayAggregate[];
}

/** Which stored request a report is of: the same under every policy. */
export type RequestOrigin = Pick<RequestReport, "file" | "index" | "surface" | "route" | "inferred">;

/** What replaying a stored request under one policy found. */
export type PolicyResult = { policy: string } & Omit<RequestReport, keyof RequestOrigin>;

/** One stored request replayed under several policies: its result under each, in the order of the policies. */
export interface ComparedRequest extends RequestOrigin {
  results: PolicyResult[];
}

/** The one JSON document `promptgate replay` prints for several policies (`--policy` repeated). */
export interface ComparisonReport {
  /** The resolved versions, in the order given. */
  policies: string[];
  files: string[];
  requests: ComparedRequest[];
  /** One per policy, in the order of `policies`. */
  summaries: Array<{ policy: string } & ReplaySummary>;
  /** Present when asked for (`--report`). */
  aggregate?: ReplayAggregate[];
}

/** One policy's replay of every stored request. */
interface PolicyRun {
  /** The resolved version, `name@` + 12 hex digits. */
  policy: string;
  requests: RequestReport[];
}

/**
 * Replays stored request bodies through the gateway's own parsing, measuring and both window
 * checks, offline. Throws `UsageError` for an unknown policy or a file that does not parse;
 * a request the gateway would refuse is reported, not thrown.
 */
export async function replay(options: ReplayOptions): Promise<ReplayReport> {
  const run = replayUnder([resolvePolicy(options, options.policy)], options)[0]!;
  const { policy, requests } = run;
  const report: ReplayReport = { policy, files: pathsOf(options), requests, summary: summarize(requests) };
  if (options.aggregate) report.aggregate = aggregateReplay([run]);
  return report;
}

/**
 * Replays stored request bodies as `replay` does, under each of several policies, and reports
 * every request's result under each. Throws `UsageError` also when two policies resolve to the
 * same version.
 */
export async function replayComparing(options: ComparingOptions): Promise<ComparisonReport> {
  const versions = options.policy.map((policy) => resolvePolicy(options, policy));
  const repeated = versions.find(
    (version, position) => versions.findIndex((other) => other.ref === version.ref) !== position,
  );
  if (repeated !== undefined) throw new UsageError(`--policy names ${repeated.ref} more than once.`);
  const runs = replayUnder(versions, options);
  const report: ComparisonReport = {
    policies: runs.map((run) => run.policy),
    files: pathsOf(options),
    requests: compareRequests(runs),
    summaries: runs.map(({ policy, requests }) => ({ policy, ...summarize(requests) })),
  };
  if (options.aggregate) report.aggregate = aggregateReplay(runs);
  return report;
}

/** Reads the stored requests once and replays them under each policy version. */
function replayUnder(versions: PolicyVersion[], options: Omit<ReplayOptions, "policy">): PolicyRun[] {
  const models = options.models ?? modelTableOf(undefined, surfaces);
  const config = options.config ?? readConfig({});
  const stored = options.files.flatMap(readStoredRequests);
  // As the Node gateway scans a body: its UTF-8 checked natively first.
  const scanner = new JsonScanner(isUtf8);
  // Schemas are admitted as the Node gateway admits them: compiled by Ajv (in place; a replay serves no one else).
  const schemaValidators = createSchemaValidators({ compiling: ajvSchemaCompiling() });
  return versions.map((policy) => {
    const context: ReplayContext = { policy, schemas: options.schemas, models, config, scanner, schemaValidators };
    return { policy: policy.ref, requests: stored.map((request) => replayRequest(request, context)) };
  });
}

function pathsOf(options: Pick<ReplayOptions, "files">): string[] {
  return options.files.map((file) => file.path);
}

/** Every run replays the same stored requests in the same order: request `i` of each is the same one. */
function compareRequests(runs: PolicyRun[]): ComparedRequest[] {
  return runs[0]!.requests.map(({ file, index, surface, route, inferred }, position) => ({
    file,
    index,
    surface,
    route,
    inferred,
    results: runs.map((run) => resultOf(run.policy, run.requests[position]!)),
  }));
}

function resultOf(policy: string, request: RequestReport): PolicyResult {
  const { file, index, surface, route, inferred, ...result } = request;
  return { policy, ...result };
}

function resolvePolicy(options: Pick<ReplayOptions, "policies">, policy: string): PolicyVersion {
  try {
    return options.policies.resolve(policy);
  } catch (error) {
    if (!GatewayError.isInstance(error) || error.code !== "POLICY_NOT_FOUND") throw error;
    const known = options.policies.list().map((version) => version.ref);
    throw new UsageError(`No known policy version matches "${policy}". Known: ${known.join(", ")}.`);
  }
}

function summarize(requests: RequestReport[]): ReplaySummary {
  const totals = requests.flatMap((request) => (request.prompt_size === null ? [] : [request.prompt_size.total_chars]));
  const passing = requests.filter((request) => request.passes).length;
  const rejected = requests.filter((request) => request.rejected_by !== undefined).length;
  return {
    count: requests.length,
    passing,
    rejected,
    invalid: requests.length - passing - rejected,
    // reduce, not Math.min(...totals): a replay may hold more requests than a call takes arguments.
    min_total_chars: totals.length === 0 ? null : totals.reduce((least, total) => Math.min(least, total)),
    max_total_chars: totals.length === 0 ? null : totals.reduce((most, total) => Math.max(most, total)),
  };
}
