import { upstreamOf } from "../config.js";
import type { Deps } from "../deps.js";
import { classifyUpstreamAnswer } from "../errors/classify.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import type { JsonObject } from "../json/json-object.js";
import type { LogicalCall } from "../logical-call.js";
import { jobLimitsOf, type PolicyVersion } from "../policy/policy.js";
import type { CallAttempt, CallRecord } from "../record/call-record.js";
import type { ModelEntry } from "../routing/model-table.js";
import { type CallRoute, routeCall } from "../routing/route-call.js";
import { translatedResponse } from "../routing/translated-response.js";
import { admitListedSchema } from "../schema/schema-admission.js";
import type { MeasuredEndpoint } from "../surfaces/surface.js";
import { surfaces } from "../surfaces/surfaces.js";
import type { UpstreamResponse } from "../transport/transport.js";
import { isFailure } from "./answer-failure.js";
import { createJob, type RunAgain } from "./answer-jobs.js";
import type { CallRecorder } from "./call-recorder.js";
import { citationCheckOf } from "./call-sources.js";
import { debugChecks } from "./debug-steps.js";
import { type FinishedAnswer, finishAnswer } from "./finish-answer.js";
import { modelOfBody } from "./model-of-body.js";
import {
  compileCallSchema,
  type Measurements,
  namedSchema,
  type ParsedCall,
  type PreparedCall,
  parseCall,
  prepareCall,
} from "./prepare-call.js";
import { resolveCachedPrefix } from "./resolve-cached-prefix.js";
import { resolveUnmeasured } from "./resolve-unmeasured.js";
import { sendUpstream } from "./send-upstream.js";
import { checkSessionCaps, openSessionTurn, type SessionTurn } from "./session-turn.js";
import type { SurfaceRequest } from "./surface-request.js";
import { routedUpstreamCall, type UpstreamCall } from "./upstream-call.js";

/** What sending a measured call needs. */
export interface MeasuredCall {
  deps: Deps;
  input: SurfaceRequest;
  endpoint: MeasuredEndpoint;
  policy: PolicyVersion;
  recorder: CallRecorder;
  headers: Record<string, string>;
  call: UpstreamCall;
  /** The session turn the call is, once opened (Responses). */
  turn?: SessionTurn;
  /** Runs the call again as an answer job's run. */
  runAgain: RunAgain;
}

const encoder = new TextEncoder();

/** One attempt of a call, measured and checked: where it goes and the exact body sent. */
interface Attempt {
  route: CallRoute;
  call: UpstreamCall;
  prepared: PreparedCall;
  measurements: Measurements;
}

/** What came back of an attempt: an answer to relay, or a failure that was read to decide on a fallback. */
type Outcome =
  | { kind: "answer"; response: UpstreamResponse }
  | { kind: "failed"; error: GatewayError; response: UpstreamResponse | undefined };

/**
 * Sends a measured call: parses it, routes it by its model (translated where the model table sends it to another
 * provider), measures and checks it, and relays the answer. A model with a fallback gets exactly one more attempt
 * on it when the first fails with a transient class before any byte of its answer was relayed, within the same
 * deadline, measured and checked like the first; never a second fallback.
 */
export async function sendCall(measured: MeasuredCall): Promise<FinishedAnswer> {
  const { deps, input, endpoint, policy, recorder } = measured;
  const { record } = recorder;
  const clientBytes = await input.body(deps.config.maxBodyBytes);
  let parsed: ParsedCall;
  let schema: unknown;
  let entry: ModelEntry | undefined;
  try {
    schema = namedSchema(deps.schemas, input.request.headers.get("x-promptgate-schema"));
    parsed = parseCall(endpoint, clientBytes, input.path, policy, deps.jsonScanner);
    // Before the checks, so that a call they refuse still names its model.
    record.model = parsed.call.model;
    noteFields(record, parsed.call);
    entry = parsed.call.model === undefined ? undefined : deps.models.resolve(parsed.call.model);
  } catch (error) {
    // A request refused as invalid still names its model where its body does.
    record.model ??= modelOfBody(clientBytes);
    throw error;
  }
  /** Goes on with another body than the client's: measured and sent as it is. */
  const reparse = (body: JsonObject) => {
    parsed = parseCall(endpoint, encoder.encode(JSON.stringify(body)), input.path, policy, deps.jsonScanner);
    record.model = parsed.call.model;
    noteFields(record, parsed.call);
    entry = parsed.call.model === undefined ? undefined : deps.models.resolve(parsed.call.model);
  };
  const clientBody = parsed.body;
  const jobs = endpoint.jobs;
  const asJob =
    jobs !== undefined &&
    input.job === undefined &&
    jobs.isBackground(clientBody) &&
    jobLimitsOf(policy.policy).mode === "gateway";
  if (asJob && parsed.call.stream) {
    throw invalidRequest(
      "An answer job is polled, not streamed: send background: true without stream (or stream without background). Nothing was sent.",
      "stream",
    );
  }
  const citations = await citationCheckOf(deps, input, policy, parsed.call.stream);
  // A job is measured and checked as the call its run sends.
  if (asJob) reparse(jobs.foreground(clientBody));
  let turn: SessionTurn | undefined;
  if (endpoint.sessions !== undefined && endpoint.kind === "generate") {
    const requestedReasoning = endpoint.reasoningOf?.(parsed.body, input.path)?.level;
    const context = { policy, recorder, requestedReasoning, claim: !asJob };
    const opened = await openSessionTurn(deps, input, endpoint.sessions, parsed.body, context);
    turn = opened.turn;
    // The session's settings, and a held history, are part of what is measured and sent.
    if (opened.body !== undefined) reparse(opened.body);
    measured.turn = turn;
  }
  const first = await prepareAttempt(measured, parsed, schema, entry, {});
  if (asJob) {
    const job = { deps, input, route: jobs, policy, recorder, headers: measured.headers, body: clientBody };
    return { response: await createJob({ ...job, runAgain: measured.runAgain }), recordLater: false };
  }
  let outcome = await sendAttempt(measured, first, fallbackPossible(measured, entry));
  let answered = first;
  const fallback = outcome.kind === "failed" ? fallbackOf(measured, first, outcome.error) : undefined;
  if (fallback !== undefined) {
    const attempts: CallAttempt[] = [attemptRecord(first, outcome)];
    record.attempts = attempts;
    let second: Attempt | undefined;
    const measurements: Measurements = {};
    try {
      second = await prepareAttempt(measured, parsed, schema, fallback, measurements);
    } catch (error) {
      // A fallback the checks or its provider refuse is not tried: the client gets the first attempt's failure.
      if (!GatewayError.isInstance(error)) throw error;
      attempts.push({
        model: fallback.name,
        provider: providerLabel(deps, fallback),
        provider_check: measurements.provider,
        error: error.code,
        tried: false,
      });
      restoreFirst(record, first);
    }
    if (second !== undefined) {
      // Read like the first, so that a failure of the fallback is on the record before the client gets it.
      outcome = await sendAttempt(measured, second, true);
      answered = second;
      attempts.push(attemptRecord(second, outcome));
      const from = headerValue(first.route.entry?.name);
      const to = headerValue(fallback.name);
      if (from !== undefined && to !== undefined) measured.headers["x-promptgate-model-fallback"] = `${from}_to_${to}`;
    }
  }
  const answeredModel = headerValue(answered.route.entry?.name);
  if (answeredModel !== undefined) measured.headers["x-promptgate-model"] = answeredModel;
  if (outcome.kind === "failed" && outcome.response === undefined) throw outcome.error;
  const response = outcome.response as UpstreamResponse;
  record.decision = endpoint.kind === "count" ? "measured" : "sent";
  record.upstream_status = response.status;
  const { prepared, measurements, route } = answered;
  const size = (measurements.provider ?? measurements.preflight) as PromptSize;
  const answeredTurn =
    turn === undefined
      ? undefined
      : {
          turn,
          translated: route.translation !== undefined,
          policy: policy.ref,
          fallbackModel: answered === first ? undefined : answered.route.entry?.name,
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
    headers: measured.headers,
    call: answered.call,
    ref: input.ref,
    recorder,
  });
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

/**
 * Routes, measures and checks one attempt; the record and the `x-promptgate-prompt-size` header hold its checks'
 * sizes, a refused attempt's too.
 */
async function prepareAttempt(
  measured: MeasuredCall,
  parsed: ParsedCall,
  schema: unknown,
  entry: ModelEntry | undefined,
  measurements: Measurements,
): Promise<Attempt> {
  const { deps, input, endpoint, policy, recorder, headers } = measured;
  const { record } = recorder;
  try {
    const route = routeCall(
      { config: deps.config, models: deps.models, surfaces, policy: policy.policy, now: deps.now().getTime() },
      input.surface,
      endpoint,
      input.path,
      parsed.body,
      entry,
    );
    const call = routedUpstreamCall(deps, measured.call, route.provider, parsed.call.stream);
    record.provider = call.upstream.label;
    record.upstream_model =
      route.entry !== undefined && route.target !== undefined ? route.entry.upstreamModel : undefined;
    const context = { call, path: input.path };
    const known = await resolveCachedPrefix(deps, parsed.call, policy, context);
    const prefix = await resolveUnmeasured(deps, endpoint, parsed, policy, context, known);
    await compileCallSchema(endpoint, parsed, policy, schema);
    const prepared = prepareCall(endpoint, parsed, input.path, policy, schema, prefix, measurements, route.target);
    record.projection_omitted = prepared.omitted;
    const listed = admitListedSchema(prepared.fullSchema, policy, deps.schemas);
    // The schema's name, where the gateway knows it: the one the header named, or the listed one it is.
    const named = input.request.headers.get("x-promptgate-schema") ?? listed;
    if (prepared.fullSchema !== undefined && named !== undefined) record.schema = named;
    const turn = measured.turn;
    if (turn !== undefined && (turn.session !== undefined || turn.route.stores(parsed.body))) {
      checkSessionCaps(turn, measurements.provider ?? (measurements.preflight as PromptSize), policy);
    }
    return { route, call, prepared, measurements };
  } finally {
    // A fallback refused before it was measured leaves the first attempt's sizes in place.
    record.preflight = measurements.preflight ?? record.preflight;
    record.provider_check = measurements.provider;
    if (measurements.preflight) headers["x-promptgate-prompt-size"] = JSON.stringify(measurements.preflight);
    debugChecks(deps, input.ref, measurements, policy, endpoint.kind);
  }
}

/**
 * Sends an attempt. Where a fallback may follow (`readFailure`), a failed answer is read and classified here, and
 * a call that got no answer is caught, so that the caller can decide; otherwise the answer goes on as it came.
 */
async function sendAttempt(measured: MeasuredCall, attempt: Attempt, readFailure: boolean): Promise<Outcome> {
  const { deps } = measured;
  const { call, route, prepared } = attempt;
  const path = route.target?.path ?? measured.input.path;
  let response: UpstreamResponse;
  try {
    response = await sendUpstream(deps, call, path, prepared.body, undefined, prepared.fullSchema);
  } catch (error) {
    if (!readFailure || !GatewayError.isInstance(error)) throw error;
    return { kind: "failed", error, response: undefined };
  }
  if (!readFailure || !isFailure(response.status)) return { kind: "answer", response };
  const bytes = await response.bytes();
  const error = classifyUpstreamAnswer(
    { status: response.status, headers: response.headers, text: new TextDecoder().decode(bytes) },
    { recognise: call.provider.classifyError, now: deps.now().getTime(), secrets: call.secrets() },
  );
  // The answer is read once; whoever relays it reads the same bytes.
  return { kind: "failed", error, response: { ...response, bytes: async () => bytes } };
}

/** Whether a call may fall back: its model names a fallback, and its surface routes models (a native API does not). */
function fallbackPossible(measured: MeasuredCall, entry: ModelEntry | undefined): boolean {
  return entry?.fallback !== undefined && measured.input.surface.routesModels === true;
}

/**
 * The model a failed first attempt falls back to: its entry's one fallback, when the failure is transient
 * (`rate_limit`, `worker`, `timeout`, `upstream`), the call's deadline has time left and its client is still there.
 */
function fallbackOf(measured: MeasuredCall, first: Attempt, error: GatewayError): ModelEntry | undefined {
  const name = first.route.entry?.fallback;
  if (name === undefined || !fallbackPossible(measured, first.route.entry) || !error.retryable) return undefined;
  if (first.call.deadline.passed() || measured.input.client.aborted) return undefined;
  return measured.deps.models.resolve(name);
}

function attemptRecord(attempt: Attempt, outcome: Outcome): CallAttempt {
  return {
    model: attempt.route.entry?.name ?? "",
    provider: attempt.call.upstream.label,
    provider_check: attempt.measurements.provider,
    upstream_status: outcome.response?.status,
    error: outcome.kind === "failed" ? outcome.error.code : undefined,
    tried: true,
  };
}

/** The record's top-level fields name the attempt whose answer the client gets. */
function restoreFirst(record: CallRecord, first: Attempt): void {
  record.provider = first.call.upstream.label;
  record.provider_check = first.measurements.provider;
  record.projection_omitted = first.prepared.omitted;
  record.upstream_model = first.route.target === undefined ? undefined : first.route.entry?.upstreamModel;
}

function providerLabel(deps: Deps, entry: ModelEntry): string {
  return upstreamOf(deps.config, entry.provider).label;
}

/**
 * A model name as a header value: a name of the client's (or of a table's prefix rule) may hold anything, and only
 * printable ASCII of a bounded length goes into a header; any other name is left out of it (the record has it).
 */
function headerValue(name: string | undefined): string | undefined {
  return name !== undefined && /^[\x21-\x7e]{1,200}$/.test(name) ? name : undefined;
}

/** At most this many paths of other fields are kept in a call record. */
const maxRecordedFields = 100;

/** Lists, by JSON path, what a call counted as other and what it could not measure. */
function noteFields(record: CallRecord, call: LogicalCall): void {
  if (call.other.length > 0) record.other_fields = call.other.slice(0, maxRecordedFields).map((field) => field.path);
  if (call.unmeasured.length > 0) record.unmeasured = call.unmeasured.map((content) => content.path);
}
