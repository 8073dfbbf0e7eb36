import { upstreamOf } from "../config.js";
import type { Deps } from "../deps.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import { parseJsonBody, readCappedBody } from "../http/read-body.js";
import { answerJob, createJob } from "../jobs/answer-jobs.js";
import type { JsonObject } from "../json/json-object.js";
import { boundPolicyRef, checkModelAllowed, scopedCase } from "../keys/key-bindings.js";
import { deadlineSecondsOf, jobLimitsOf, type PolicyVersion, upstreamTimeoutsOf } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import type { CallSpan } from "../record/call-tracing.js";
import type { ModelEntry } from "../routing/model-table.js";
import { translatedResponse } from "../routing/translated-response.js";
import { keyCredentialOf, upstreamCredential } from "../routing/upstream-credential.js";
import { openSessionTurn, ownStoredResponse, type SessionTurn } from "../sessions/session-turn.js";
import { checkProxiedBody } from "../surfaces/proxied-body.js";
import type { JobRoute, MeasuredEndpoint, ProxyEndpoint } from "../surfaces/surface.js";
import type { UpstreamResponse } from "../transport/transport.js";
import { answerFailure, isFailure } from "./answer-failure.js";
import { authenticationRequired, presentedCredentials } from "./authorize-call.js";
import { checkOwnPrefixRoute } from "./cached-prefix-owner.js";
import {
  type Attempt,
  type AttemptScope,
  attemptRecord,
  fallbackOf,
  fallbackPossible,
  headerValue,
  type Outcome,
  prepareAttempt,
  refusedAttemptRecord,
  sendAttempt,
} from "./call-attempts.js";
import { callLabels } from "./call-labels.js";
import { admitUnderLimits } from "./call-limits.js";
import { callRecorder, type Recorder } from "./call-recorder.js";
import { citationCheckOf } from "./call-sources.js";
import { type Caller, identifyCaller } from "./caller.js";
import { type Deadline, startDeadline } from "./deadline.js";
import { debugPolicy, debugRoute } from "./debug-steps.js";
import { type FinishedAnswer, finishAnswer } from "./finish-answer.js";
import { modelOfBody } from "./model-of-body.js";
import { namedSchema, type ParsedCall, parseCall } from "./prepare-call.js";
import { relayProxied } from "./relay-proxied.js";
import { casePolicy, checkInvalidAnswerCap, requestedPolicy } from "./resolve-policy.js";
import { ResponseHeaders } from "./response-headers.js";
import { sendUpstream } from "./send-upstream.js";
import type { SurfaceRequest } from "./surface-request.js";
import { callSecrets, openUpstreamCall, type UpstreamCall, type UpstreamTiming } from "./upstream-call.js";
import type { CitationCheck } from "./validate-answer-body.js";
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
  "RATE_LIMITED",
  "BUDGET_EXHAUSTED",
]);

const encoder = new TextEncoder();

/** A call whose route and policy are known: the endpoint it matched, the version it runs under, its provider call. */
interface Resolved<E> {
  endpoint: E;
  policy: PolicyVersion;
  call: UpstreamCall;
}

/** A client's body read: its parsed call and the model table's entry for the model it names. */
interface ReadCall {
  parsed: ParsedCall;
  entry: ModelEntry | undefined;
}

/** A call measured and checked: what was read of it, its session turn, and its first attempt ready to send. */
interface Measured {
  scope: AttemptScope;
  parsed: ParsedCall;
  /** The named schema of `x-promptgate-schema`, if any. */
  schema: unknown;
  entry: ModelEntry | undefined;
  /** The client's body as sent (with `background: true` for a job). */
  clientBody: JsonObject;
  /** The job route, when the call becomes an answer job. */
  job: JobRoute | undefined;
  citations: CitationCheck | undefined;
  first: Attempt;
}

/** What was sent: the attempt whose answer the client gets, and that answer. */
interface Sent {
  attempt: Attempt;
  /** Whether the attempt is a fallback's. */
  fellBack: boolean;
  response: UpstreamResponse;
}

/**
 * One call, from its key to its record, in phases that each hand the next what it needs: authenticate, resolve the
 * route and policy, measure (read, parse, open a session turn, prepare the first attempt), send with fallback, and
 * finish the answer. The call's record has one owner, its recorder; the gateway's response headers one, its
 * `ResponseHeaders`.
 */
export class CallFlow {
  readonly #deps: Deps;
  #input: SurfaceRequest;
  readonly #headers: ResponseHeaders;
  readonly #recorder: Recorder;
  #deadline: Deadline | undefined;
  #timing: UpstreamTiming | undefined;
  #span: CallSpan | undefined;
  /** Only a failure's kept text and an internal error's stack need them: gathered the first time one asks. */
  #secrets: readonly string[] | undefined;

  constructor(deps: Deps, input: SurfaceRequest) {
    this.#deps = deps;
    this.#input = input;
    this.#headers = new ResponseHeaders(input.ref);
    this.#recorder = callRecorder(deps, newRecord(deps, input, deps.now().toISOString()), {
      secrets: () => this.#secretsOf(),
      release: () => this.#release(),
    });
  }

  /**
   * Runs the call: every failure becomes the surface's native error, and a client that went away cancels the
   * provider call. A request without a valid gateway key is refused before anything about it is kept.
   */
  async run(): Promise<Response> {
    const deps = this.#deps;
    const { surface, request, url } = this.#input;
    const presented = presentedCredentials(surface, request.headers, url);
    const caller = await identifyCaller(deps, presented[0]);
    if (caller === undefined) {
      // The contract records every call, but this is no call of a client the gateway knows: a record
      // and a log line each would let anyone fill the disk (with long headers, 30 KB a request). It is
      // counted instead; the runtime's log writes the count at most once a minute.
      writeLog(deps, { event: "refused_unauthenticated" });
      return this.#nativeError(authenticationRequired());
    }
    this.#input = { ...this.#input, caller };
    this.#recorder.noteKey(caller.key);
    this.#span = deps.tracing?.start(request);
    let finished: FinishedAnswer | undefined;
    try {
      const resolved = await this.#resolve(caller, presented.length > 0);
      finished =
        resolved.endpoint.kind === "proxy"
          ? { response: await this.#proxy(resolved as Resolved<ProxyEndpoint>), recordLater: false }
          : await this.#measuredCall(resolved as Resolved<MeasuredEndpoint>);
      return finished.response;
    } catch (caught) {
      return this.#refuse(caught);
    } finally {
      // The answer goes out once its record is kept (a stream's record is kept when the stream ends).
      if (finished?.recordLater !== true) await this.#recorder.settle();
    }
  }

  /**
   * Labels, credential, route and policy: the endpoint the request matched and the version it runs under. `presents`
   * tells whether the request carries a credential of its own.
   */
  async #resolve(caller: Caller, presents: boolean): Promise<Resolved<ProxyEndpoint | MeasuredEndpoint>> {
    const deps = this.#deps;
    const input = this.#input;
    const { surface, request, client, url, path, ref } = input;
    const recorder = this.#recorder;
    // Checked before the record holds them: both are kept verbatim.
    const labels = callLabels(request.headers);
    recorder.noteLabels(labels.caseId, labels.callLabel, input.job);
    const credential = upstreamCredential(
      deps.config,
      surface,
      presents,
      keyCredentialOf(deps, caller.key, surface.name),
    );
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
    const policyRef = boundPolicyRef(caller.key, input.policyRef);
    const requested = await requestedPolicy(deps, policyRef);
    // A call its case refuses (409) still names the version it asked for.
    recorder.notePolicy(requested.ref);
    const caseId = labels.caseId === undefined ? undefined : scopedCase(caller.key?.id, labels.caseId);
    const { policy, invalidAnswers } = await casePolicy(deps, requested, policyRef, caseId);
    recorder.notePolicy(policy.ref);
    debugPolicy(deps, ref, policy, labels.caseId, requested);
    if (endpoint.kind === "generate") checkInvalidAnswerCap(policy, invalidAnswers);
    const deadline = startDeadline(
      deadlineSecondsOf(policy.policy),
      client,
      upstreamTimeoutsOf(policy.policy, deps.config),
    );
    this.#deadline = deadline;
    const traceparent = this.#span?.traceparent();
    const secrets = () => this.#secretsOf();
    const call = openUpstreamCall(deps, {
      ref,
      surface,
      caller,
      request,
      client,
      url,
      credential,
      deadline,
      traceparent,
      secrets,
    });
    this.#timing = call.timing;
    return { endpoint, policy, call };
  }

  /** A proxied route: its body checked, a job's route answered from its state, anything else relayed. */
  async #proxy({ endpoint, policy, call }: Resolved<ProxyEndpoint>): Promise<Response> {
    const deps = this.#deps;
    const input = this.#input;
    const { request, path } = input;
    const recorder = this.#recorder;
    // Read first: a body the route does not take is refused whatever the route would answer (a job's, the provider's).
    const body = bodyless.has(request.method) ? undefined : await input.body(deps.config.maxBodyBytes);
    if (body !== undefined && body.byteLength > 0) checkProxiedBody(endpoint.body, parseJsonBody(body).body);
    if (endpoint.responseIdOf !== undefined) {
      const id = endpoint.responseIdOf(path);
      const job = endpoint.jobs === undefined ? undefined : await deps.store.getJob(id);
      if (job !== undefined && endpoint.jobs !== undefined && endpoint.jobAction !== undefined) {
        const poll = { deps, input, route: endpoint.jobs, action: endpoint.jobAction, job };
        return await answerJob({ ...poll, headers: this.#headers, recorder });
      }
      await ownStoredResponse(deps, input, id);
    }
    if (endpoint.cachedPrefixOf !== undefined) await checkOwnPrefixRoute(deps, call, endpoint.cachedPrefixOf(path));
    const response = await sendUpstream(deps, call, path, body);
    recorder.decide("sent");
    recorder.noteUpstreamStatus(response.status);
    if (isFailure(response.status)) {
      return await answerFailure({ deps, call, policy, response, recorder, headers: this.#headers.all() });
    }
    return await relayProxied(deps, endpoint, path, response, this.#headers.all(), { call, policy, recorder });
  }

  /** A call to measure: measured, then made an answer job, or sent (with a fallback where one applies) and finished. */
  async #measuredCall(resolved: Resolved<MeasuredEndpoint>): Promise<FinishedAnswer> {
    const measured = await this.#measure(resolved);
    if (measured.job !== undefined)
      return { response: await this.#createJob(measured, measured.job), recordLater: false };
    if (measured.scope.endpoint.kind === "generate") {
      const { measurements } = measured.first;
      await admitUnderLimits({
        deps: this.#deps,
        caller: this.#input.caller as Caller,
        policy: measured.scope.policy,
        size: (measurements.provider ?? measurements.preflight) as PromptSize,
        headers: this.#headers,
        recorder: this.#recorder,
      });
    }
    const sent = await this.#send(measured);
    return this.#finish(measured, sent);
  }

  /**
   * Reads and parses the body, opens its session turn (a job is measured as the call its run sends), and routes,
   * measures and checks the first attempt.
   */
  async #measure({ endpoint, policy, call }: Resolved<MeasuredEndpoint>): Promise<Measured> {
    const deps = this.#deps;
    const input = this.#input;
    const recorder = this.#recorder;
    const clientBytes = await input.body(deps.config.maxBodyBytes);
    let schema: unknown;
    let read: ReadCall;
    try {
      schema = namedSchema(deps.schemas, input.request.headers.get("x-promptgate-schema"));
      // Before the checks, so that a call they refuse still names its model.
      read = this.#read(endpoint, policy, clientBytes);
    } catch (error) {
      // A request refused as invalid still names its model where its body does.
      recorder.noteModelOfBody(modelOfBody(clientBytes));
      throw error;
    }
    const clientBody = read.parsed.body;
    const jobs = endpoint.jobs;
    const asJob =
      jobs !== undefined &&
      input.job === undefined &&
      jobs.isBackground(clientBody) &&
      jobLimitsOf(policy.policy).mode === "gateway";
    if (asJob && read.parsed.call.stream) {
      throw invalidRequest(
        "An answer job is polled, not streamed: send background: true without stream (or stream without background). Nothing was sent.",
        "stream",
      );
    }
    const citations = await citationCheckOf(deps, input, policy, read.parsed.call.stream);
    // A job is measured and checked as the call its run sends; it goes on with another body than the client's.
    if (asJob) read = this.#read(endpoint, policy, encoder.encode(JSON.stringify(jobs.foreground(clientBody))));
    let turn: SessionTurn | undefined;
    if (endpoint.sessions !== undefined && endpoint.kind === "generate") {
      const requestedReasoning = endpoint.reasoningOf?.(read.parsed.body, input.path)?.level;
      const context = { policy, recorder, requestedReasoning, claim: !asJob };
      const opened = await openSessionTurn(deps, input, endpoint.sessions, read.parsed.body, context);
      turn = opened.turn;
      // The session's settings, and a held history, are part of what is measured and sent.
      if (opened.body !== undefined) {
        read = this.#read(endpoint, policy, encoder.encode(JSON.stringify(opened.body)));
      }
    }
    const scope: AttemptScope = { deps, input, endpoint, policy, headers: this.#headers, call, turn };
    const { parsed, entry } = read;
    // The model the call reaches, a session's included: the client's, or the one its session holds.
    checkModelAllowed(input.caller?.key, parsed.call.model);
    const first = await prepareAttempt(scope, parsed, schema, entry);
    if (first.facts !== undefined) recorder.noteAttempt(first.facts);
    if (first.attempt === undefined) throw first.error;
    const job = asJob ? jobs : undefined;
    return { scope, parsed, schema, entry, clientBody, job, citations, first: first.attempt };
  }

  /** Parses a body (the client's, or the one the call goes on with) and notes its model and fields. */
  #read(endpoint: MeasuredEndpoint, policy: PolicyVersion, bytes: Uint8Array<ArrayBuffer>): ReadCall {
    const parsed = parseCall(endpoint, bytes, this.#input.path, policy, this.#deps.jsonScanner);
    this.#recorder.noteParsed(parsed.call);
    const model = parsed.call.model;
    return { parsed, entry: model === undefined ? undefined : this.#deps.models.resolve(model) };
  }

  /** Keeps a measured call as an answer job and answers with its object; its run is a call of its own. */
  #createJob(measured: Measured, route: JobRoute): Promise<Response> {
    const { deps, input, policy } = measured.scope;
    const runAgain = (again: Request, job: string) =>
      new CallFlow(deps, {
        surface: input.surface,
        request: again,
        client: again.signal,
        body: (limit) => readCappedBody(again, limit),
        url: new URL(again.url),
        path: input.path,
        policyRef: input.policyRef,
        ref: deps.newRef(),
        job,
      }).run();
    const job = { deps, input, route, policy, recorder: this.#recorder, headers: this.#headers };
    return createJob({ ...job, body: measured.clientBody, runAgain });
  }

  /**
   * Sends the first attempt and, where it failed with a transient class before any byte of its answer was relayed,
   * exactly one fallback within the same deadline, measured and checked like the first. The recorder keeps the facts
   * of the attempt whose answer the client gets.
   */
  async #send(measured: Measured): Promise<Sent> {
    const { scope, first, parsed, schema, entry } = measured;
    const recorder = this.#recorder;
    let outcome: Outcome = await sendAttempt(scope, first, fallbackPossible(scope, entry));
    let answered = first;
    const fallback = outcome.kind === "failed" ? fallbackOf(scope, first, outcome.error) : undefined;
    if (fallback !== undefined) {
      recorder.noteFallbackAttempt(attemptRecord(first, outcome));
      const second = await prepareAttempt(scope, parsed, schema, fallback);
      if (second.attempt === undefined) {
        // A fallback the checks or its provider refuse is not tried: the client gets the first attempt's failure.
        const { error, measurements } = second;
        if (!GatewayError.isInstance(error)) throw error;
        recorder.noteFallbackAttempt(refusedAttemptRecord(scope.deps, fallback, error, measurements));
        // The first attempt's facts stand, with the latest preflight measured.
        recorder.noteMeasured(measurements.preflight, first.measurements.provider);
      } else {
        recorder.noteAttempt(second.facts);
        // Read like the first, so that a failure of the fallback is on the record before the client gets it.
        outcome = await sendAttempt(scope, second.attempt, true);
        answered = second.attempt;
        recorder.noteFallbackAttempt(attemptRecord(second.attempt, outcome));
        const from = headerValue(first.route.entry?.name);
        const to = headerValue(fallback.name);
        if (from !== undefined && to !== undefined) this.#headers.modelFallback(from, to);
      }
    }
    const answeredModel = headerValue(answered.route.entry?.name);
    if (answeredModel !== undefined) this.#headers.model(answeredModel);
    if (outcome.kind === "failed" && outcome.response === undefined) throw outcome.error;
    const response = outcome.response as UpstreamResponse;
    recorder.decide(scope.endpoint.kind === "count" ? "measured" : "sent");
    recorder.noteUpstreamStatus(response.status);
    return { attempt: answered, fellBack: answered !== first, response };
  }

  /** Finishes the answer of the attempt that was sent: the one place the provider's answer comes back to. */
  #finish(measured: Measured, { attempt, fellBack, response }: Sent): Promise<FinishedAnswer> {
    const { scope, citations } = measured;
    const { deps, input, endpoint, policy, turn } = scope;
    const { prepared, measurements, route } = attempt;
    const size = (measurements.provider ?? measurements.preflight) as PromptSize;
    const answeredTurn =
      turn === undefined
        ? undefined
        : {
            turn,
            translated: route.translation !== undefined,
            policy: policy.ref,
            fallbackModel: fellBack ? route.entry?.name : undefined,
          };
    return finishAnswer({
      turn: answeredTurn,
      citations,
      deps,
      endpoint: route.translation === undefined ? endpoint : translatedEndpoint(endpoint, route.translation.endpoint),
      policy,
      prepared,
      size,
      path: input.path,
      response:
        route.translation === undefined
          ? response
          : translatedResponse(response, route.translation, prepared.call.stream),
      headers: this.#headers,
      call: attempt.call,
      ref: input.ref,
      recorder: this.#recorder,
    });
  }

  /** A failure of the call as the client gets it: its native error, or nothing for a client that went away. */
  #refuse(caught: unknown): Response {
    const recorder = this.#recorder;
    if (this.#input.client.aborted) {
      // Nobody is left to answer; the record says so instead of blaming the provider.
      recorder.decide("cancelled");
      return new Response(null, { status: 499, headers: this.#headers.all() });
    }
    let error: GatewayError;
    if (GatewayError.isInstance(caught)) {
      error = caught;
    } else {
      recorder.internal(caught, "call");
      error = new GatewayError("internal", 500, "The gateway failed to handle this request.");
    }
    recorder.noteFailure(error);
    if (rejections.has(error.code)) recorder.decide("rejected");
    return this.#nativeError(error);
  }

  /** Frees what the call holds once it ends, and notes the provider request's times. */
  #release(): void {
    this.#deadline?.clear();
    const timing = this.#timing;
    if (timing?.startedAt !== undefined && timing.firstByteAt !== undefined) {
      this.#recorder.noteTiming(timing.startedAt, timing.firstByteAt, timing.endedAt);
    }
    this.#span?.end(this.#recorder.record);
  }

  #secretsOf(): readonly string[] {
    const { surface, request, url, caller } = this.#input;
    if (this.#secrets === undefined) {
      const secrets = callSecrets(this.#deps.config, [surface], request, url);
      // The server-held credentials the caller's named key names are as secret as the configured ones.
      for (const variable of Object.values(caller?.key?.credentials ?? {})) {
        const value = this.#deps.secretNamed(variable);
        if (value !== undefined && value !== "") secrets.push(value);
      }
      this.#secrets = secrets;
    }
    return this.#secrets;
  }

  /** A gateway error in the surface's native shape, with the gateway's headers. */
  #nativeError(error: GatewayError): Response {
    const rendered = this.#input.surface.renderError(error, this.#headers.ref);
    return new Response(JSON.stringify(rendered.body), {
      status: rendered.status,
      headers: { ...rendered.headers, ...this.#headers.all() },
    });
  }
}

/**
 * The client's endpoint as a translated answer is finished: answers read in the client's shape (a Responses answer
 * is kept by the gateway as its session's turn), but an error body saying the schema was refused is the provider's.
 */
function translatedEndpoint(client: MeasuredEndpoint, provider: MeasuredEndpoint): MeasuredEndpoint {
  const output = client.structuredOutput;
  const native = provider.structuredOutput;
  const structuredOutput =
    output === undefined || native === undefined ? output : { ...output, schemaRefusal: native.schemaRefusal };
  return { ...client, structuredOutput };
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
