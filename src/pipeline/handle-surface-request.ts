import type { Deps } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import { readCappedBody } from "../http/read-body.js";
import type { LogicalCall } from "../logical-call.js";
import { deadlineSecondsOf, type PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import type { MeasuredEndpoint, Surface } from "../surfaces/surface.js";
import type { PromptSize } from "../window/prompt-size.js";
import { answerFailure, isFailure, noteFailure } from "./answer-failure.js";
import { authenticated, authenticationRequired, upstreamCredential } from "./authorize-call.js";
import { callLabels } from "./call-labels.js";
import { type CallRecorder, callRecorder } from "./call-recorder.js";
import { type Deadline, startDeadline } from "./deadline.js";
import { debugChecks, debugPolicy, debugRoute } from "./debug-steps.js";
import { finishAnswer } from "./finish-answer.js";
import { modelOfBody } from "./model-of-body.js";
import {
  compileCallSchema,
  type Measurements,
  namedSchema,
  type PreparedCall,
  parseCall,
  prepareCall,
} from "./prepare-call.js";
import { relayProxied } from "./relay-proxied.js";
import { resolveCachedPrefix } from "./resolve-cached-prefix.js";
import { casePolicy, requestedPolicy } from "./resolve-policy.js";
import { resolveUnmeasured } from "./resolve-unmeasured.js";
import { sendUpstream } from "./send-upstream.js";
import { callSecrets, openUpstreamCall, type UpstreamCall } from "./upstream-call.js";
import { writeLog } from "./write-log.js";

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
  /** Why the request path is no route of the surface, if it is not (answered after the key check). */
  refusal?: GatewayError;
}

/**
 * Runs one call: key, route, policy, body, measurement, both checks, the provider call, the
 * answer's validation, the record and the log line; every failure becomes the surface's native
 * error, and a client that went away cancels the provider call. A request without a valid
 * gateway key is refused before anything about it is kept.
 */
export async function handleSurfaceRequest(deps: Deps, input: SurfaceRequest): Promise<Response> {
  const { surface, request, path, ref } = input;
  const headers: Record<string, string> = { "x-promptgate-ref": ref };
  const time = deps.now().toISOString();
  const url = new URL(request.url);
  if (!(await authenticated(deps.config, surface, request.headers, url))) {
    // The contract records every call, but this is no call of a client the gateway knows: a record
    // and a log line each would let anyone fill the disk (with long headers, 30 KB a request). It is
    // counted instead; the runtime's log writes the count at most once a minute.
    writeLog(deps, { event: "refused_unauthenticated" });
    return nativeError(surface, authenticationRequired(), headers);
  }
  let deadline: Deadline | undefined;
  const recorder = callRecorder(deps, newRecord(deps, input, time), {
    secrets: () => callSecrets(deps.config, [surface], request, url),
    release: () => deadline?.clear(),
  });
  const { record } = recorder;
  let settleLater = false;
  try {
    // Checked before the record holds them: both are kept verbatim.
    const labels = callLabels(request.headers);
    record.case = labels.caseId;
    record.call_label = labels.callLabel;
    const credential = upstreamCredential(deps.config, surface);
    const endpoint = input.refusal === undefined ? surface.match(request.method, path) : undefined;
    debugRoute(
      deps,
      { ref, surface: surface.name, method: request.method, route: path, policyRef: input.policyRef },
      endpoint,
    );
    if (input.refusal !== undefined) throw input.refusal;
    if (endpoint === undefined) throw new GatewayError("NOT_FOUND", 404, "There is no such route on this surface.");
    if (endpoint.kind === "method-not-allowed") {
      throw new GatewayError("METHOD_NOT_ALLOWED", 405, "This route does not take this HTTP method.", {
        headers: { allow: endpoint.allow },
      });
    }
    const requested = await requestedPolicy(deps, input.policyRef);
    // A call its case refuses (409) still names the version it asked for.
    record.policy = requested.ref;
    const policy = await casePolicy(deps, requested, input.policyRef, record.case);
    record.policy = policy.ref;
    debugPolicy(deps, ref, policy, record.case, requested);
    deadline = startDeadline(deadlineSecondsOf(policy.policy), request.signal);
    const call = openUpstreamCall(deps, { ref, surface, request, url, credential, deadline });
    if (endpoint.kind === "proxy") {
      const body = bodyless.has(request.method) ? undefined : await readCappedBody(request, deps.config.maxBodyBytes);
      const response = await sendUpstream(deps, call, path, body);
      record.decision = "sent";
      record.upstream_status = response.status;
      if (isFailure(response.status)) {
        return await answerFailure({ deps, call, policy, response, record, headers });
      }
      return await relayProxied(deps, endpoint, path, response, headers, { call, policy, recorder });
    }
    const answer = await sendCall({ deps, input, endpoint, policy, recorder, headers, call });
    settleLater = answer.recordLater;
    return answer.response;
  } catch (caught) {
    if (request.signal.aborted) {
      // Nobody is left to answer; the record says so instead of blaming the provider.
      record.decision = "cancelled";
      return new Response(null, { status: 499, headers });
    }
    let error: GatewayError;
    if (GatewayError.isInstance(caught)) {
      error = caught;
    } else {
      recorder.internal(caught, "call");
      error = new GatewayError("internal", 500, "The gateway failed to handle this request.");
    }
    noteFailure(record, error);
    if (error.code === "INVESTIGATION_PROMPT_LIMIT" || error.code === "CACHE_PREFIX_UNKNOWN") {
      record.decision = "rejected";
    }
    return nativeError(surface, error, headers);
  } finally {
    // The answer goes out once its record is kept (a stream's record is kept when the stream ends).
    if (!settleLater) await recorder.settle();
  }
}

/** A call's record as it starts: what the request names, before any step has run. */
function newRecord(deps: Deps, input: SurfaceRequest, time: string): CallRecord {
  return {
    ref: input.ref,
    time,
    policy: undefined,
    case: undefined,
    call_label: undefined,
    surface: input.surface.name,
    provider: deps.config.upstreams[input.surface.name].label,
    model: undefined,
    route: input.path,
    preflight: undefined,
    provider_check: undefined,
    decision: "failed",
    upstream_status: undefined,
    validation: null,
    repair: undefined,
    projection_omitted: [],
    error: undefined,
  };
}

/** A gateway error in the surface's native shape, with the gateway's headers. */
function nativeError(surface: Surface, error: GatewayError, headers: Record<string, string>): Response {
  const rendered = surface.renderError(error, headers["x-promptgate-ref"] ?? "");
  return new Response(JSON.stringify(rendered.body), {
    status: rendered.status,
    headers: { ...rendered.headers, ...headers },
  });
}

/** What sending a measured call needs. */
interface MeasuredCall {
  deps: Deps;
  input: SurfaceRequest;
  endpoint: MeasuredEndpoint;
  policy: PolicyVersion;
  recorder: CallRecorder;
  headers: Record<string, string>;
  call: UpstreamCall;
}

async function sendCall(measured: MeasuredCall): Promise<{ response: Response; recordLater: boolean }> {
  const { deps, input, endpoint, policy, recorder, headers, call } = measured;
  const { record } = recorder;
  const { request, path } = input;
  const clientBytes = await readCappedBody(request, deps.config.maxBodyBytes);
  const measurements: Measurements = {};
  let prepared: PreparedCall;
  try {
    const schema = namedSchema(deps.schemas, request.headers.get("x-promptgate-schema"));
    const parsed = parseCall(endpoint, clientBytes, path, policy);
    // Before the checks, so that a call they refuse still names its model.
    record.model = parsed.call.model;
    noteFields(record, parsed.call);
    const known = await resolveCachedPrefix(deps, parsed.call, policy, { call, path });
    const prefix = await resolveUnmeasured(deps, endpoint, parsed, policy, { call, path }, known);
    await compileCallSchema(endpoint, parsed, policy, schema);
    prepared = prepareCall(endpoint, parsed, path, policy, schema, prefix, measurements);
  } catch (error) {
    // A request refused as invalid still names its model where its body does.
    record.model ??= modelOfBody(clientBytes);
    throw error;
  } finally {
    record.preflight = measurements.preflight;
    record.provider_check = measurements.provider;
    if (measurements.preflight) headers["x-promptgate-prompt-size"] = JSON.stringify(measurements.preflight);
    debugChecks(deps, input.ref, measurements, policy, endpoint.kind);
  }
  record.projection_omitted = prepared.omitted;
  const response = await sendUpstream(deps, call, path, prepared.body);
  record.decision = endpoint.kind === "count" ? "measured" : "sent";
  record.upstream_status = response.status;
  const size = (measurements.provider ?? measurements.preflight) as PromptSize;
  return finishAnswer({
    deps,
    endpoint,
    policy,
    prepared,
    size,
    path,
    response,
    headers,
    call,
    ref: input.ref,
    recorder,
  });
}

/** At most this many paths of other fields are kept in a call record. */
const maxRecordedFields = 100;

/** Lists, by JSON path, what a call counted as other and what it could not measure. */
function noteFields(record: CallRecord, call: LogicalCall): void {
  if (call.other.length > 0) record.other_fields = call.other.slice(0, maxRecordedFields).map((field) => field.path);
  if (call.unmeasured.length > 0) record.unmeasured = call.unmeasured.map((content) => content.path);
}
