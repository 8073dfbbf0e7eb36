import { GatewayError } from "../../../errors/gateway-error.js";
import { type Measurements, parseCall, prepareCall } from "../../../pipeline/prepare-call.js";
import type { PolicyVersion } from "../../../policy/policy.js";
import type { MeasuredEndpoint } from "../../../surfaces/surface.js";
import { surfaces } from "../../../surfaces/surfaces.js";
import { type CachedPrefix, noCachedPrefix, type PromptSize } from "../../../window/prompt-size.js";
import type { StoredProblem, StoredRequest } from "./stored-requests.js";

/** What replaying one stored request found: its sizes under both checks and whether the gateway would send it. */
export interface RequestReport {
  file: string;
  index: number;
  surface: string | null;
  route: string | null;
  /** Whether surface and route were inferred from a bare body rather than named by an envelope. */
  inferred: boolean;
  /** The preflight's prompt_size, or null when the body could not be measured. */
  prompt_size: PromptSize | null;
  /** The provider check's prompt_size, or null when it did not run (count routes, earlier failures). */
  provider_prompt_size: PromptSize | null;
  /** Whether the gateway would send the call upstream under the policy. */
  passes: boolean;
  /** Which window check rejected the call (INVESTIGATION_PROMPT_LIMIT). */
  rejected_by?: "preflight" | "provider";
  /** The gateway's error for a call it would not send. */
  error?: { code: string; message: string };
  /** The body refers to a cached prefix whose size the envelope does not give; it counted as 0. */
  cache_prefix_unmeasured?: true;
}

/** Everything a replay needs besides the request: the resolved policy and the named schemas. */
export interface ReplayContext {
  policy: PolicyVersion;
  schemas: ReadonlyMap<string, unknown>;
}

const encoder = new TextEncoder();

/**
 * Runs the gateway's own checks on one stored request, as the gateway would on arrival:
 * `parseCall`, then `prepareCall` with the policy, the envelope's named schema and its cached
 * prefix size. Nothing is sent anywhere; every failure becomes the report's `error`.
 */
export function replayRequest(stored: StoredRequest | StoredProblem, context: ReplayContext): RequestReport {
  const report: RequestReport = {
    file: stored.file,
    index: stored.index,
    surface: stored.surface ?? null,
    route: stored.route ?? null,
    inferred: stored.inferred,
    prompt_size: null,
    provider_prompt_size: null,
    passes: false,
  };
  if (stored.kind === "problem") return failed(report, "INVALID_REQUEST", stored.message);
  const endpoint = measuredEndpoint(stored);
  if (endpoint === undefined) {
    return failed(
      report,
      "NOT_FOUND",
      `The ${stored.surface} surface has no POST route ${stored.route} taking a call.`,
    );
  }
  const namedSchema = stored.schema === undefined ? undefined : context.schemas.get(stored.schema);
  if (stored.schema !== undefined && namedSchema === undefined) {
    return failed(report, "INVALID_REQUEST", `The envelope's schema "${stored.schema}" is not in the schema folder.`);
  }
  const measurements: Measurements = {};
  try {
    const parsed = parseCall(endpoint, encoder.encode(JSON.stringify(stored.body)), stored.route, context.policy);
    const prefixUnknown = parsed.call.cachedPrefix !== undefined && stored.cachePrefixChars === undefined;
    if (prefixUnknown || parsed.call.unmeasured.length > 0) {
      report.cache_prefix_unmeasured = true;
    }
    prepareCall(endpoint, parsed, stored.route, context.policy, namedSchema, cachedPrefix(stored), measurements);
    report.passes = true;
  } catch (caught) {
    if (!GatewayError.isInstance(caught)) {
      const reason = caught instanceof Error ? ` (${caught.name}: ${caught.message})` : "";
      return failed(report, "internal", `The gateway failed to handle this request${reason}.`, measurements);
    }
    const check = caught.details.promptSize?.check;
    if (caught.code === "INVESTIGATION_PROMPT_LIMIT" && check !== undefined) report.rejected_by = check;
    return failed(report, caught.code, caught.message, measurements);
  }
  return withSizes(report, measurements);
}

function measuredEndpoint(stored: StoredRequest): MeasuredEndpoint | undefined {
  const surface = surfaces.find((candidate) => candidate.name === stored.surface);
  const endpoint = surface?.match("POST", stored.route);
  if (endpoint === undefined || endpoint.kind === "proxy" || endpoint.kind === "method-not-allowed") return undefined;
  return endpoint;
}

// Offline there is no provider to ask and no store of created caches: a prefix counts with
// the size the envelope records, and otherwise as none.
function cachedPrefix(stored: StoredRequest): CachedPrefix {
  if (stored.cachePrefixChars === undefined) return noCachedPrefix;
  return { chars: stored.cachePrefixChars, estimated: false, containsSchema: false };
}

function failed(report: RequestReport, code: string, message: string, measurements?: Measurements): RequestReport {
  report.passes = false;
  report.error = { code, message };
  return measurements === undefined ? report : withSizes(report, measurements);
}

function withSizes(report: RequestReport, measurements: Measurements): RequestReport {
  report.prompt_size = measurements.preflight ?? null;
  report.provider_prompt_size = measurements.provider ?? null;
  return report;
}
