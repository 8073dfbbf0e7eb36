import { upstreamOf } from "../config.js";
import type { Deps } from "../deps.js";
import { classifyUpstreamAnswer } from "../errors/classify.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import { mayReach } from "../keys/key-bindings.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CallAttempt } from "../record/call-record.js";
import type { ModelEntry } from "../routing/model-table.js";
import { type CallRoute, routeCall } from "../routing/route-call.js";
import { keyCredentialOf } from "../routing/upstream-credential.js";
import { admitListedSchema } from "../schema/schema-admission.js";
import { checkSessionCaps, type SessionTurn } from "../sessions/session-turn.js";
import type { MeasuredEndpoint } from "../surfaces/surface.js";
import type { UpstreamResponse } from "../transport/transport.js";
import { isFailure } from "./answer-failure.js";
import type { AttemptFacts } from "./call-recorder.js";
import { debugChecks } from "./debug-steps.js";
import {
  compileCallSchema,
  type Measurements,
  type ParsedCall,
  type PreparedCall,
  prepareCall,
} from "./prepare-call.js";
import { resolveCachedPrefix } from "./resolve-cached-prefix.js";
import { resolveUnmeasured } from "./resolve-unmeasured.js";
import type { ResponseHeaders } from "./response-headers.js";
import { sendUpstream } from "./send-upstream.js";
import type { SurfaceRequest } from "./surface-request.js";
import { routedUpstreamCall, type UpstreamCall } from "./upstream-call.js";

/** What every attempt of one call shares: the request, its endpoint and policy, its provider call and session turn. */
export interface AttemptScope {
  deps: Deps;
  input: SurfaceRequest;
  endpoint: MeasuredEndpoint;
  policy: PolicyVersion;
  /** Where the preflight's size goes to the client. */
  headers: ResponseHeaders;
  /** The provider call as the request opened it, before its model was routed. */
  call: UpstreamCall;
  /** The session turn the call is, where its route has sessions. */
  turn: SessionTurn | undefined;
}

/** One attempt of a call, measured and checked: where it goes, the exact body sent, and the facts it established. */
export interface Attempt {
  route: CallRoute;
  call: UpstreamCall;
  prepared: PreparedCall;
  measurements: Measurements;
  facts: AttemptFacts;
}

/** An attempt prepared, or refused by its checks or its provider, with what it established either way. */
export type PreparedAttempt =
  | { attempt: Attempt; facts: AttemptFacts; error?: undefined }
  | { attempt?: undefined; facts: AttemptFacts | undefined; error: unknown; measurements: Measurements };

/** What came back of an attempt: an answer to relay, or a failure that was read to decide on a fallback. */
export type Outcome =
  | { kind: "answer"; response: UpstreamResponse }
  | { kind: "failed"; error: GatewayError; response: UpstreamResponse | undefined };

/**
 * Routes, measures and checks one attempt: the attempt, or what refused it, with the facts it established either
 * way (none before it was routed). The `x-promptgate-prompt-size` header holds its preflight's size, a refused
 * attempt's too.
 */
export async function prepareAttempt(
  scope: AttemptScope,
  parsed: ParsedCall,
  schema: unknown,
  entry: ModelEntry | undefined,
): Promise<PreparedAttempt> {
  const { deps, input, endpoint, policy, headers } = scope;
  let measurements: Measurements = {};
  let facts: AttemptFacts | undefined;
  try {
    const route = routeCall(
      {
        config: deps.config,
        models: deps.models,
        surfaces: deps.surfaces,
        policy: policy.policy,
        now: deps.now().getTime(),
        keyCredential: (provider) => keyCredentialOf(deps, scope.call.caller.key, provider),
      },
      input.surface,
      endpoint,
      input.path,
      parsed.body,
      entry,
    );
    const call = routedUpstreamCall(deps, scope.call, route.provider, parsed.call.stream);
    const upstreamModel =
      route.entry !== undefined && route.target !== undefined ? route.entry.upstreamModel : undefined;
    facts = { provider: call.upstream.label, upstreamModel };
    const context = { call, path: input.path };
    const known = await resolveCachedPrefix(deps, parsed.call, policy, context);
    const prefix = await resolveUnmeasured(deps, endpoint, parsed, policy, context, known);
    const validators = deps.schemaValidators;
    await compileCallSchema(endpoint, parsed, policy, schema, validators);
    const checked = prepareCall(endpoint, parsed, input.path, policy, schema, prefix, validators, route.target);
    measurements = checked.measurements;
    if (checked.prepared === undefined) throw checked.error;
    const prepared = checked.prepared;
    facts.omitted = prepared.omitted;
    const listed = admitListedSchema(prepared.fullSchema, policy, deps.schemas);
    // The schema's name, where the gateway knows it: the one the header named, or the listed one it is.
    const named = input.request.headers.get("x-promptgate-schema") ?? listed;
    if (prepared.fullSchema !== undefined && named !== undefined) facts.schema = named;
    const turn = scope.turn;
    if (turn !== undefined && (turn.session !== undefined || turn.route.stores(parsed.body))) {
      checkSessionCaps(turn, measurements.provider ?? (measurements.preflight as PromptSize), policy);
    }
    const attemptFacts = measuredFacts(facts, measurements);
    return { attempt: { route, call, prepared, measurements, facts: attemptFacts }, facts: attemptFacts };
  } catch (error) {
    return { error, facts: facts === undefined ? undefined : measuredFacts(facts, measurements), measurements };
  } finally {
    if (measurements.preflight) headers.promptSize(measurements.preflight);
    debugChecks(deps, input.ref, measurements, policy, endpoint.kind);
  }
}

function measuredFacts(facts: AttemptFacts, measurements: Measurements): AttemptFacts {
  return { ...facts, preflight: measurements.preflight, providerCheck: measurements.provider };
}

/**
 * Sends an attempt. Where a fallback may follow (`readFailure`), a failed answer is read and classified here, and
 * a call that got no answer is caught, so that the caller can decide; otherwise the answer goes on as it came.
 */
export async function sendAttempt(scope: AttemptScope, attempt: Attempt, readFailure: boolean): Promise<Outcome> {
  const { deps } = scope;
  const { call, route, prepared } = attempt;
  const path = route.target?.path ?? scope.input.path;
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

/**
 * Whether a call may fall back: its model names a fallback, its surface routes models (a native API does not), and
 * the caller's named key may reach the fallback (one outside its models is never tried).
 */
export function fallbackPossible(scope: AttemptScope, entry: ModelEntry | undefined): boolean {
  return (
    entry?.fallback !== undefined &&
    scope.input.surface.routesModels === true &&
    mayReach(scope.input.caller?.key, entry.fallback)
  );
}

/**
 * The model a failed first attempt falls back to: its entry's one fallback, when the failure is transient
 * (`rate_limit`, `worker`, `timeout`, `upstream`), the call's deadline has time left and its client is still there.
 */
export function fallbackOf(scope: AttemptScope, first: Attempt, error: GatewayError): ModelEntry | undefined {
  const name = first.route.entry?.fallback;
  if (name === undefined || !fallbackPossible(scope, first.route.entry) || !error.retryable) return undefined;
  if (first.call.deadline.passed() || scope.input.client.aborted) return undefined;
  return scope.deps.models.resolve(name);
}

/** An attempt that was sent, as the record lists it. */
export function attemptRecord(attempt: Attempt, outcome: Outcome): CallAttempt {
  return {
    model: attempt.route.entry?.name ?? "",
    provider: attempt.call.upstream.label,
    provider_check: attempt.measurements.provider,
    upstream_status: outcome.response?.status,
    error: outcome.kind === "failed" ? outcome.error.code : undefined,
    tried: true,
  };
}

/** A fallback its checks or its provider refused, as the record lists it. */
export function refusedAttemptRecord(
  deps: Deps,
  fallback: ModelEntry,
  error: GatewayError,
  measurements: Measurements,
): CallAttempt {
  return {
    model: fallback.name,
    provider: upstreamOf(deps.config, fallback.provider).label,
    provider_check: measurements.provider,
    error: error.code,
    tried: false,
  };
}

/**
 * A model name as a header value: a name of the client's (or of a table's prefix rule) may hold anything, and only
 * printable ASCII of a bounded length goes into a header; any other name is left out of it (the record has it).
 */
export function headerValue(name: string | undefined): string | undefined {
  return name !== undefined && /^[\x21-\x7e]{1,200}$/.test(name) ? name : undefined;
}
