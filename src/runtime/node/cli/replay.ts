import { type Config, readConfig } from "../../../config.js";
import { GatewayError } from "../../../errors/gateway-error.js";
import type { PolicyVersion } from "../../../policy/policy.js";
import type { PolicyRegistry } from "../../../policy/policy-registry.js";
import { type ModelTable, modelTableOf } from "../../../routing/model-table.js";
import { surfaceNames } from "../../../surfaces/surfaces.js";
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

/** The one JSON document `promptgate replay` prints. */
export interface ReplayReport {
  /** The resolved version, `name@` + 12 hex digits. */
  policy: string;
  files: string[];
  requests: RequestReport[];
  summary: ReplaySummary;
}

/**
 * Replays stored request bodies through the gateway's own parsing, measuring and both window
 * checks, offline. Throws `UsageError` for an unknown policy or a file that does not parse;
 * a request the gateway would refuse is reported, not thrown.
 */
export async function replay(options: ReplayOptions): Promise<ReplayReport> {
  const context: ReplayContext = {
    policy: resolvePolicy(options),
    schemas: options.schemas,
    models: options.models ?? modelTableOf(undefined, surfaceNames),
    config: options.config ?? readConfig({}),
  };
  const stored = options.files.flatMap(readStoredRequests);
  const requests = stored.map((request) => replayRequest(request, context));
  return {
    policy: context.policy.ref,
    files: options.files.map((file) => file.path),
    requests,
    summary: summarize(requests),
  };
}

function resolvePolicy(options: ReplayOptions): PolicyVersion {
  try {
    return options.policies.resolve(options.policy);
  } catch (error) {
    if (!GatewayError.isInstance(error) || error.code !== "POLICY_NOT_FOUND") throw error;
    const known = options.policies.list().map((version) => version.ref);
    throw new UsageError(`No known policy version matches "${options.policy}". Known: ${known.join(", ")}.`);
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
