import type { Config } from "../../../config.js";
import { GatewayError } from "../../../errors/gateway-error.js";
import type { PromptSize } from "../../../errors/prompt-size.js";
import type { JsonScanner } from "../../../json/json-scanner.js";
import { type Measurements, parseCall, prepareCall } from "../../../pipeline/prepare-call.js";
import type { PolicyVersion } from "../../../policy/policy.js";
import type { ModelTable } from "../../../routing/model-table.js";
import { routeCall } from "../../../routing/route-call.js";
import { admitListedSchema } from "../../../schema/schema-admission.js";
import type { SchemaValidators } from "../../../schema/schema-validators.js";
import type { MeasuredEndpoint, Surface } from "../../../surfaces/surface.js";
import { surfaces } from "../../../surfaces/surfaces.js";
import { type CachedPrefix, noCachedPrefix } from "../../../window/prompt-size.js";
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
  /** The provider the model table routes the call to, where that is not the surface's own (measured as translated). */
  routed_to?: string;
  /** The body refers to a cached prefix whose size the envelope does not give; it counted as 0. */
  cache_prefix_unmeasured?: true;
}

/** Everything a replay needs besides the request: the resolved policy, the named schemas and where models go. */
export interface ReplayContext {
  policy: PolicyVersion;
  schemas: ReadonlyMap<string, unknown>;
  /** The model table a call is routed by, as the gateway would (a routed call is measured as translated). */
  models: ModelTable;
  config: Config;
  /** Reads each stored body into a tape, as the gateway's runtime reads a request's. */
  scanner: JsonScanner;
  /** Compiles each call's full schema, as the Node gateway's validators compile a request's. */
  schemaValidators: SchemaValidators;
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
  const surface = surfaces.find((candidate) => candidate.name === stored.surface);
  const endpoint = surface === undefined ? undefined : measuredEndpoint(surface, stored.route);
  if (surface === undefined || endpoint === undefined) {
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
    const parsed = parseCall(
      endpoint,
      encoder.encode(JSON.stringify(stored.body)),
      stored.route,
      context.policy,
      context.scanner,
    );
    const prefixUnknown = parsed.call.cachedPrefix !== undefined && stored.cachePrefixChars === undefined;
    if (prefixUnknown || parsed.call.unmeasured.length > 0) {
      report.cache_prefix_unmeasured = true;
    }
    const entry = parsed.call.model === undefined ? undefined : context.models.resolve(parsed.call.model);
    // A replay runs as no key: routing refuses only what the gateway's own configuration would.
    const routing = { ...context, surfaces, policy: context.policy.policy, now: 0, keyCredential: () => undefined };
    const route = routeCall(routing, surface, endpoint, stored.route, parsed.body, entry);
    if (route.provider !== surface) report.routed_to = route.provider.name;
    const prefix = cachedPrefix(stored);
    const checked = prepareCall(
      endpoint,
      parsed,
      stored.route,
      context.policy,
      namedSchema,
      prefix,
      context.schemaValidators,
      route.target,
    );
    Object.assign(measurements, checked.measurements);
    if (checked.prepared === undefined) throw checked.error;
    admitListedSchema(checked.prepared.fullSchema, context.policy, context.schemas);
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

function measuredEndpoint(surface: Surface, route: string): MeasuredEndpoint | undefined {
  const endpoint = surface.match("POST", route);
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
