import { upstreamOf } from "../config.js";
import type { Deps } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import { parseJsonBody, readCappedBody } from "../http/read-body.js";
import { deadlineSecondsOf, upstreamTimeoutsOf } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import { upstreamCredential } from "../routing/upstream-credential.js";
import { checkProxiedBody } from "../surfaces/proxied-body.js";
import type { Surface } from "../surfaces/surface.js";
import { answerFailure, isFailure } from "./answer-failure.js";
import { answerJob } from "./answer-jobs.js";
import { authenticated, authenticationRequired, presentedCredentials } from "./authorize-call.js";
import { checkOwnPrefixRoute } from "./cached-prefix-owner.js";
import { callLabels } from "./call-labels.js";
import { callRecorder, type Recorder } from "./call-recorder.js";
import { type Deadline, startDeadline } from "./deadline.js";
import { debugPolicy, debugRoute } from "./debug-steps.js";
import { relayProxied } from "./relay-proxied.js";
import { casePolicy, checkInvalidAnswerCap, requestedPolicy } from "./resolve-policy.js";
import { ResponseHeaders } from "./response-headers.js";
import { sendCall } from "./send-call.js";
import { sendUpstream } from "./send-upstream.js";
import { ownStoredResponse } from "./session-turn.js";
import type { SurfaceRequest } from "./surface-request.js";
import { callSecrets, openUpstreamCall, type UpstreamTiming } from "./upstream-call.js";
import { writeLog } from "./write-log.js";

/** Methods whose requests carry no body. */
const bodyless = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

/** The refusals of a call by the window's or a session's rules: the record's decision is `rejected`. */
const rejections = new Set([
  "INVESTIGATION_PROMPT_LIMIT",
  "CACHE_PREFIX_UNKNOWN",
  "SESSION_NOT_FOUND",
  "SESSION_EXPIRED",
  "SESSION_SETTINGS_CHANGED",
  "SESSION_TOKEN_LIMIT",
  "INVALID_ANSWER_LIMIT",
]);

/**
 * Runs one call: key, route, policy, body, measurement, both checks, the provider call, the
 * answer's validation, the record and the log line; every failure becomes the surface's native
 * error, and a client that went away cancels the provider call. A request without a valid
 * gateway key is refused before anything about it is kept.
 */
export async function handleSurfaceRequest(deps: Deps, input: SurfaceRequest): Promise<Response> {
  const { surface, request, client, url, path, ref } = input;
  const headers = new ResponseHeaders(ref);
  const time = deps.now().toISOString();
  if (!(await authenticated(deps.config, surface, request.headers, url))) {
    // The contract records every call, but this is no call of a client the gateway knows: a record
    // and a log line each would let anyone fill the disk (with long headers, 30 KB a request). It is
    // counted instead; the runtime's log writes the count at most once a minute.
    writeLog(deps, { event: "refused_unauthenticated" });
    return nativeError(surface, authenticationRequired(), headers);
  }
  let deadline: Deadline | undefined;
  let timing: UpstreamTiming | undefined;
  const span = deps.tracing?.start(request);
  // Only a failure's kept text and an internal error's stack need them: gathered the first time one asks.
  let gathered: readonly string[] | undefined;
  const secrets = () => {
    gathered ??= callSecrets(deps.config, [surface], request, url);
    return gathered;
  };
  const recorder = callRecorder(deps, newRecord(deps, input, time), {
    secrets,
    release: () => {
      deadline?.clear();
      if (timing !== undefined) noteTiming(recorder, timing);
      span?.end(recorder.record);
    },
  });
  let settleLater = false;
  try {
    // Checked before the record holds them: both are kept verbatim.
    const labels = callLabels(request.headers);
    recorder.noteLabels(labels.caseId, labels.callLabel, input.job);
    const presents = presentedCredentials(surface, request.headers, url).length > 0;
    const credential = upstreamCredential(deps.config, surface, presents);
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
    recorder.notePolicy(requested.ref);
    const { policy, invalidAnswers } = await casePolicy(deps, requested, input.policyRef, labels.caseId);
    recorder.notePolicy(policy.ref);
    debugPolicy(deps, ref, policy, labels.caseId, requested);
    if (endpoint.kind === "generate") checkInvalidAnswerCap(policy, invalidAnswers);
    deadline = startDeadline(deadlineSecondsOf(policy.policy), client, upstreamTimeoutsOf(policy.policy, deps.config));
    const traceparent = span?.traceparent();
    const call = openUpstreamCall(deps, {
      ref,
      surface,
      request,
      client,
      url,
      credential,
      deadline,
      traceparent,
      secrets,
    });
    timing = call.timing;
    if (endpoint.kind === "proxy") {
      // Read first: a body the route does not take is refused whatever the route would answer (a job's, the provider's).
      const body = bodyless.has(request.method) ? undefined : await input.body(deps.config.maxBodyBytes);
      if (body !== undefined && body.byteLength > 0) checkProxiedBody(endpoint.body, parseJsonBody(body).body);
      if (endpoint.responseIdOf !== undefined) {
        const id = endpoint.responseIdOf(path);
        const job = endpoint.jobs === undefined ? undefined : await deps.store.getJob(id);
        if (job !== undefined && endpoint.jobs !== undefined && endpoint.jobAction !== undefined) {
          const poll = { deps, input, route: endpoint.jobs, action: endpoint.jobAction, job, headers, recorder };
          return await answerJob(poll);
        }
        await ownStoredResponse(deps, input, id);
      }
      if (endpoint.cachedPrefixOf !== undefined) await checkOwnPrefixRoute(deps, call, endpoint.cachedPrefixOf(path));
      const response = await sendUpstream(deps, call, path, body);
      recorder.decide("sent");
      recorder.noteUpstreamStatus(response.status);
      if (isFailure(response.status)) {
        return await answerFailure({ deps, call, policy, response, recorder, headers: headers.all() });
      }
      return await relayProxied(deps, endpoint, path, response, headers.all(), { call, policy, recorder });
    }
    const runAgain = (again: Request, job: string) =>
      handleSurfaceRequest(deps, {
        surface,
        request: again,
        client: again.signal,
        body: (limit) => readCappedBody(again, limit),
        url: new URL(again.url),
        path,
        policyRef: input.policyRef,
        ref: deps.newRef(),
        job,
      });
    const answer = await sendCall({ deps, input, endpoint, policy, recorder, headers, call, runAgain });
    settleLater = answer.recordLater;
    return answer.response;
  } catch (caught) {
    if (client.aborted) {
      // Nobody is left to answer; the record says so instead of blaming the provider.
      recorder.decide("cancelled");
      return new Response(null, { status: 499, headers: headers.all() });
    }
    let error: GatewayError;
    if (GatewayError.isInstance(caught)) {
      error = caught;
    } else {
      recorder.internal(caught, "call");
      error = new GatewayError("internal", 500, "The gateway failed to handle this request.");
    }
    recorder.noteFailure(error);
    if (rejections.has(error.code)) {
      recorder.decide("rejected");
    }
    return nativeError(surface, error, headers);
  } finally {
    // The answer goes out once its record is kept (a stream's record is kept when the stream ends).
    if (!settleLater) await recorder.settle();
  }
}

/** The provider request's times on the record, in whole milliseconds, once its answer's head arrived. */
function noteTiming(recorder: Recorder, timing: UpstreamTiming): void {
  const { startedAt, firstByteAt, endedAt } = timing;
  if (startedAt === undefined || firstByteAt === undefined) return;
  recorder.noteTiming(startedAt, firstByteAt, endedAt);
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
    provider: upstreamOf(deps.config, input.surface.name).label,
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
function nativeError(surface: Surface, error: GatewayError, headers: ResponseHeaders): Response {
  const rendered = surface.renderError(error, headers.ref);
  return new Response(JSON.stringify(rendered.body), {
    status: rendered.status,
    headers: { ...rendered.headers, ...headers.all() },
  });
}
