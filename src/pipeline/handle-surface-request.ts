import type { Deps } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import { readCappedBody } from "../http/read-body.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import type { MeasuredEndpoint, Surface } from "../surfaces/surface.js";
import type { PromptSize } from "../window/prompt-size.js";
import { finishAnswer } from "./finish-answer.js";
import { type Measurements, namedSchema, type PreparedCall, parseCall, prepareCall } from "./prepare-call.js";
import { relayProxied } from "./relay-proxied.js";
import { resolveCachedPrefix } from "./resolve-cached-prefix.js";
import { resolvePolicy } from "./resolve-policy.js";
import { sendUpstream } from "./send-upstream.js";
import { upstreamRequest } from "./upstream-request.js";

/** Methods whose requests carry no body. */
const bodyless = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

/** One request on a surface, from the route to the client's response. */
export interface SurfaceRequest {
  surface: Surface;
  request: Request;
  /** The route path below the surface's mount, e.g. `/chat/completions`. */
  path: string;
  /** The policy named in the URL, or undefined for the default. */
  policyRef: string | undefined;
  ref: string;
}

/**
 * Runs one call: route, policy, body, measurement, both checks, the provider call, the
 * answer's validation, and the record; every failure becomes the surface's native error.
 */
export async function handleSurfaceRequest(deps: Deps, input: SurfaceRequest): Promise<Response> {
  const { surface, request, path, ref } = input;
  const headers: Record<string, string> = { "x-promptgate-ref": ref };
  const upstream = deps.config.upstreams[surface.name];
  const record: CallRecord = {
    ref,
    time: deps.now().toISOString(),
    policy: undefined,
    case: request.headers.get("x-promptgate-case") ?? undefined,
    call_label: request.headers.get("x-promptgate-call") ?? undefined,
    surface: surface.name,
    provider: upstream.label,
    model: undefined,
    route: path,
    preflight: undefined,
    provider_check: undefined,
    decision: "failed",
    upstream_status: undefined,
    validation: null,
    repair: undefined,
    projection_omitted: [],
    error: undefined,
  };
  let recordLater = false;
  try {
    const endpoint = surface.match(request.method, path);
    if (endpoint === undefined) throw new GatewayError("NOT_FOUND", 404, "There is no such route on this surface.");
    if (endpoint.kind === "method-not-allowed") {
      throw new GatewayError("METHOD_NOT_ALLOWED", 405, "This route does not take this HTTP method.", {
        headers: { allow: endpoint.allow },
      });
    }
    const policy = await resolvePolicy(deps, input.policyRef, record.case);
    record.policy = policy.ref;
    const url = new URL(request.url);
    if (endpoint.kind === "proxy") {
      const body = bodyless.has(request.method) ? undefined : await readCappedBody(request, deps.config.maxBodyBytes);
      const response = await sendUpstream(deps, upstreamRequest(surface, upstream, request, url, path, body));
      record.decision = "sent";
      record.upstream_status = response.status;
      return await relayProxied(deps, endpoint, path, response, headers);
    }
    const answer = await sendCall(deps, input, endpoint, policy, record, headers, url);
    recordLater = answer.recordLater;
    return answer.response;
  } catch (caught) {
    const error = GatewayError.isInstance(caught)
      ? caught
      : new GatewayError("internal", 500, "The gateway failed to handle this request.");
    record.error = error.code;
    if (error.code === "INVESTIGATION_PROMPT_LIMIT" || error.code === "CACHE_PREFIX_UNKNOWN") {
      record.decision = "rejected";
    }
    const rendered = surface.renderError(error, ref);
    return new Response(JSON.stringify(rendered.body), {
      status: rendered.status,
      headers: { ...rendered.headers, ...headers },
    });
  } finally {
    if (!recordLater) deps.recordCall(record);
  }
}

async function sendCall(
  deps: Deps,
  input: SurfaceRequest,
  endpoint: MeasuredEndpoint,
  policy: PolicyVersion,
  record: CallRecord,
  headers: Record<string, string>,
  url: URL,
): Promise<{ response: Response; recordLater: boolean }> {
  const { surface, request, path } = input;
  const clientBytes = await readCappedBody(request, deps.config.maxBodyBytes);
  const schema = namedSchema(deps.schemas, request.headers.get("x-promptgate-schema"));
  const measurements: Measurements = {};
  let prepared: PreparedCall;
  try {
    const parsed = parseCall(endpoint, clientBytes, path);
    const prefix = await resolveCachedPrefix(deps, parsed.call, policy, { surface, request, url, path });
    prepared = prepareCall(endpoint, parsed, path, policy, schema, prefix, measurements);
  } finally {
    record.preflight = measurements.preflight;
    record.provider_check = measurements.provider;
    if (measurements.preflight) headers["x-promptgate-prompt-size"] = JSON.stringify(measurements.preflight);
  }
  record.model = prepared.call.model;
  record.projection_omitted = prepared.omitted;
  const upstream = deps.config.upstreams[surface.name];
  const response = await sendUpstream(deps, upstreamRequest(surface, upstream, request, url, path, prepared.body));
  record.decision = endpoint.kind === "count" ? "measured" : "sent";
  record.upstream_status = response.status;
  const size = (measurements.provider ?? measurements.preflight) as PromptSize;
  return finishAnswer({ deps, endpoint, policy, prepared, size, path, response, record, headers });
}
