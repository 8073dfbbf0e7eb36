import type { ErrorRecogniser } from "../errors/classify.js";
import type { GatewayError } from "../errors/gateway-error.js";
import type { JsonObject } from "../json/json-object.js";
import type { Tape } from "../json/tape.js";
import type { CachedPrefixReference, LogicalCall } from "../logical-call.js";
import type { Policy } from "../policy/policy.js";
import type { RefusalText } from "../schema/schema-refusal.js";
import type { SimulatedClock } from "../simulated/simulated-clock.js";
import type { UpstreamRequest } from "../transport/transport.js";
import type { RequestedReasoning } from "./requested-reasoning.js";
import type { ChatTranslation } from "./translation.js";
import type { Rule } from "./wire-rules.js";

/** A request body rewritten for the provider, and what a schema projection left out. */
export interface TransportedBody {
  body: JsonObject;
  omitted: string[];
}

/** How an endpoint carries structured output: the schema on the way in, the answer on the way out. */
export interface StructuredOutput {
  /** The full JSON Schema of the response schema the body sends natively, if any. */
  fullSchema(call: LogicalCall, body: JsonObject): unknown;
  /**
   * The body the provider receives for a full schema under a policy, or undefined to send the
   * client's body unchanged. `native` says whether the client sent the schema natively.
   */
  transport(body: JsonObject, fullSchema: unknown, policy: Policy, native: boolean): TransportedBody | undefined;
  /** The answer text of each choice or candidate of a whole response body (undefined where one has none). */
  answerTexts(response: JsonObject): Array<string | undefined>;
  /** A copy of the response body with the answer text of choice `index` replaced, e.g. by a repaired answer. */
  withAnswerText(response: JsonObject, index: number, text: string): JsonObject;
  /** The answer text one streamed event adds to the first choice (its data parsed as JSON). */
  streamedText(event: JsonObject): string | undefined;
  /**
   * What a provider's 400 error body names where it says it rejected the response schema (`sent`, the schema as
   * sent): its place and quoted words, which `schemaRefusal` keeps only where the schema holds them; undefined for
   * any other 400.
   */
  schemaRefusal(errorBody: JsonObject, sent: unknown): RefusalText | undefined;
  /**
   * Why the provider stopped the answer of choice `index` before its end (its length limit, a filter), as the
   * provider's own word (`length`, `MAX_TOKENS`, `SAFETY`, `max_tokens` …); undefined when it ended as it should.
   */
  stopReason(response: JsonObject, index: number): string | undefined;
  /**
   * The tokens the provider says the call used, from a whole response body or from one streamed event (which may
   * carry only one of the two); undefined where it says nothing.
   */
  usage(body: JsonObject): TokenUsage | undefined;
  /**
   * The provider's id of its response and why each of its answers ended, as the provider wrote them, from a whole
   * response body or one streamed event (which may carry either or neither).
   */
  responseFacts(body: JsonObject): ResponseFacts;
}

/** What a provider's response says of itself: its id and its answers' finish reasons, where it says them. */
export interface ResponseFacts {
  id?: string;
  finishReasons?: string[];
}

/** The facts of a response from its id and finish reasons, each kept only where it is a (non-empty) string. */
export function responseFacts(id: unknown, reasons: readonly unknown[]): ResponseFacts {
  const facts: ResponseFacts = {};
  if (typeof id === "string" && id !== "") facts.id = id;
  const finishReasons = reasons.filter((reason): reason is string => typeof reason === "string" && reason !== "");
  if (finishReasons.length > 0) facts.finishReasons = finishReasons;
  return facts;
}

/** Tokens a provider counted for a call: its input (prompt) and its output (answer), each where it said. */
export interface TokenUsage {
  input?: number;
  output?: number;
}

/** A usage from two counts, where either is a whole number; undefined when neither is. */
export function tokenUsage(input: unknown, output: unknown): TokenUsage | undefined {
  const count = (value: unknown) => (Number.isInteger(value) && (value as number) >= 0 ? (value as number) : undefined);
  const usage: TokenUsage = {};
  const inputTokens = count(input);
  const outputTokens = count(output);
  if (inputTokens !== undefined) usage.input = inputTokens;
  if (outputTokens !== undefined) usage.output = outputTokens;
  return inputTokens === undefined && outputTokens === undefined ? undefined : usage;
}

/**
 * What a successful answer leaves at the provider for later calls to refer to, so that the
 * gateway can count it when they do: a cached content created, re-dated or deleted, or a
 * stored response whose history a follow-up turn carries implicitly. A stored response's
 * `outputChars` is undefined while it is still running (a background response): its output
 * counts once the gateway sees it ended (`response-ended`).
 */
export type PrefixEffect =
  | { kind: "cached-content-created"; name: string; expiresAt: number }
  | { kind: "cached-content-expiry"; name: string; expiresAt: number }
  | { kind: "cached-content-deleted"; name: string }
  | { kind: "response-stored"; id: string; outputChars: number | undefined; expiresAt: number }
  | { kind: "response-ended"; id: string; outputChars: number }
  | { kind: "response-deleted"; id: string };

/** Reads the prefix effect of a successful answer (a whole body, or a stream's final response). */
export type PrefixEffectReader = (response: JsonObject, path: string, now: number) => PrefixEffect | undefined;

/**
 * A route whose body is a call. `generate` is measured and checked twice; `cache` (creating
 * a cached content) is measured and refused only when its content alone exceeds the limit;
 * `count` is measured and reported, never refused.
 */
export interface MeasuredEndpoint {
  kind: "generate" | "count" | "cache";
  /** Parses the wire body into the logical call; `path` is the route path below the surface's mount. */
  parse(body: JsonObject, path: string): LogicalCall;
  /**
   * The same as `parse`, reading the body from its bytes scanned into a tape (src/json/tape.ts)
   * without parsing it; absent, the body is parsed.
   */
  readTape?(tape: Tape, path: string): LogicalCall;
  /** Structured output of a `generate` route. */
  structuredOutput?: StructuredOutput;
  prefixEffect?: PrefixEffectReader;
  /** The complete response a streamed event carries at the end of a stream, if this event does. */
  finalResponseOf?(event: JsonObject): JsonObject | undefined;
  /**
   * The provider's own token count of this call, to estimate content the gateway cannot measure
   * (a stored file, a prompt template); absent, or undefined for a body, where the provider cannot count it.
   */
  tokenCount?(body: JsonObject, path: string): TokenCountRequest | undefined;
  /** The reasoning level a `generate` body asks for, read as one of the gateway's levels where it has another form. */
  reasoningOf?(body: JsonObject, path: string): RequestedReasoning | undefined;
  /** How a `generate` route whose answers a later call may continue (follow-up sessions) reads and writes a body. */
  sessions?: SessionRoute;
  /** How a `generate` route answers a call as a job the client polls (`background: true`). */
  jobs?: JobRoute;
}

/** The states of an answer job as the job route shows them. */
export type ShownJobState = "queued" | "in_progress" | "cancelling" | "completed" | "failed" | "cancelled";

/**
 * A route's answer jobs (OpenAI Responses' `background: true`): which bodies ask for one, the call a job runs, and
 * the response objects its polls return, in the API's own shape.
 */
export interface JobRoute {
  isBackground(body: JsonObject): boolean;
  /** The same call answered while the job waits for it. */
  foreground(body: JsonObject): JsonObject;
  /** The object of a job without an answer (queued, running, cancelled), made from its request. */
  pending(id: string, body: JsonObject, state: ShownJobState, createdAt: number): JsonObject;
  /** The object of a pending job in another state. */
  restated(object: JsonObject, state: ShownJobState): JsonObject;
  /** The answer as the job's object: the job's id, the answer's content. */
  answered(answer: JsonObject, id: string): JsonObject;
  /** A failed job's object: its error's code and fixed message. */
  failed(object: JsonObject, error: { code: string; message: string }): JsonObject;
  /** The answer to deleting a job. */
  deleted(id: string): JsonObject;
}

/**
 * A route's follow-up sessions (OpenAI Responses' `previous_response_id`): where a body names the response it
 * continues, and how the gateway writes a session's settings and held history into it.
 */
export interface SessionRoute {
  /** The stored response a body continues, if it names one. */
  previousOf(body: JsonObject): string | undefined;
  /** Whether a body also names a stored conversation (which never goes together with a previous response). */
  conversationOf(body: JsonObject): boolean;
  /** Whether the answer to a body is stored, so that a later turn may continue it. */
  stores(body: JsonObject): boolean;
  /** The body with the session's model and reasoning level where it names none. */
  withSettings(body: JsonObject, settings: { model: string | undefined; reasoning: string | undefined }): JsonObject;
  /** The body naming another previous response (the provider's id of one the client knows by another). */
  withPrevious(body: JsonObject, id: string): JsonObject;
  /** The body carrying `history` (the items of every earlier turn) before its own input, naming no previous response. */
  withHistory(body: JsonObject, history: unknown[]): JsonObject;
  /** The items a turn adds to a held history: its input as items, then the answer's output items. */
  turnItems(body: JsonObject, answer: JsonObject): unknown[];
}

/** A request the gateway makes for the provider's token count of a call, and where the answer holds it. */
export interface TokenCountRequest {
  /** The route path below the surface's mount. */
  path: string;
  body: JsonObject;
  tokensOf(response: JsonObject): number | undefined;
}

/** A route forwarded as it is, without measuring (e.g. listing models). */
export interface ProxyEndpoint {
  kind: "proxy";
  /** A model list (`data` of model objects) to which the model table's named models are added. */
  listsModels?: boolean;
  /** The stored response a route names (`/responses/{id}/…`): only the principal whose session it is reaches it. */
  responseIdOf?(path: string): string;
  /**
   * The cached prefix a route names (e.g. `cachedContents/{id}`), undefined where the path names none well: under
   * gateway keys only the principal that created it through the gateway reaches it.
   */
  cachedPrefixOf?(path: string): string | undefined;
  /** A list of cached prefixes: under gateway keys the caller is shown only its own. */
  listsCachedPrefixes?: CachedPrefixList;
  /** What the route does to an answer job the gateway runs under that id, answered from the gateway's state. */
  jobAction?: "retrieve" | "cancel" | "delete" | "input_items";
  /** The answer jobs whose objects the route shows. */
  jobs?: JobRoute;
  /** Read from a successful whole answer, or from the final response of a streamed one (`finalResponseOf`). */
  prefixEffect?: PrefixEffectReader;
  /** The complete response a streamed event carries at the end of a stream, if this event does. */
  finalResponseOf?(event: JsonObject): JsonObject | undefined;
  /**
   * The members the route's body may hold, none of which the model reads (a cache's new expiry); any other member is
   * refused (see `checkProxiedBody`). Absent, a route of a method with a body takes none: only an empty body or `{}`.
   */
  body?: Rule;
}

/** How a provider's list of cached prefixes names them, and the same list keeping only some of them. */
export interface CachedPrefixList {
  /** The name of each listed prefix, in order. */
  namesOf(list: JsonObject): string[];
  /** The list showing only the prefixes named in `kept`, its other members (e.g. its next page's token) as they are. */
  keeping(list: JsonObject, kept: ReadonlySet<string>): JsonObject;
  /** The token of the list's next page, if there is one. */
  nextPageToken(list: JsonObject): string | undefined;
  /** The query parameter that asks for the page of a token (e.g. `pageToken`). */
  pageTokenParameter: string;
}

/** How to ask a provider for the token count of a prefix the gateway did not see created. */
export interface PrefixTokenCount {
  /** The route path (below the mount) of a GET that describes the prefix. */
  path: string;
  /** The token count in that GET's answer, if it has one. */
  tokensOf(response: JsonObject): number | undefined;
}

/** The environment variables of a provider's upstream and its public default. */
export interface ProviderUpstream {
  /** The variable holding the upstream base URL, or `simulated` (e.g. `PROMPTGATE_UPSTREAM_OPENAI`). */
  variable: string;
  /** The variable holding a server-held key (e.g. `OPENAI_API_KEY`). */
  keyVariable: string;
  /** The provider's public base URL, used when a key is set but no URL; undefined where there is none. */
  defaultBaseUrl: string | undefined;
  /** What the base URL must look like, for `--help` (e.g. `upstream base URL incl. /v1`). */
  describe: string;
  /** Whether the provider may take calls without a key (a local server): a routed call then goes without one. */
  keyOptional?: boolean;
}

/** A provider's simulated stand-in, served in-process under the simulated origin. */
export interface SimulatedStandIn {
  /** Where it is mounted below the simulated origin, e.g. `/openai`. */
  mount: string;
  /** The base URL path the gateway calls it at, e.g. `/openai/v1`. */
  basePath: string;
  /** A new stand-in; `clock` dates what it keeps (Gemini's cached contents). */
  create(clock: SimulatedClock): { fetch(request: Request): Response | Promise<Response> };
}

/** The route of a request body found without its URL (a stored request the replay CLI reads), from its shape. */
export interface BareBodyRoute {
  /** The route path below the surface's mount. */
  route: string;
  /**
   * Whether only this API's bodies have the shape; false where another API's body may have it too (OpenAI chat's
   * `messages`), which then yields to a sure claim of another surface.
   */
  sure: boolean;
}

/** What a route of a surface does with a request. */
export type Endpoint = MeasuredEndpoint | ProxyEndpoint;

/** A known route asked with a method it does not take; `allow` lists the ones it does. */
export interface MethodNotAllowed {
  kind: "method-not-allowed";
  allow: string;
}

/** The endpoint when the method is the route's one method, else `method-not-allowed`. */
export function forMethod(method: string, allowed: string, endpoint: Endpoint): Endpoint | MethodNotAllowed {
  return method === allowed ? endpoint : { kind: "method-not-allowed", allow: allowed };
}

/** An error rendered in a surface's native shape. */
export interface RenderedError {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** A route's operation in the GenAI conventions' terms: a conversation, Gemini's content generation, or another. */
export type GenAiOperation = "chat" | "generate_content" | "other";

/** A surface's names in the GenAI conventions: `gen_ai.provider.name`, and `gen_ai.operation.name` of a route. */
export interface GenAiNames {
  provider: string;
  operation(route: string): GenAiOperation;
}

/**
 * One provider API as clients speak it: its routes, how its bodies read, which headers
 * travel upstream, and its native error shape. Everything provider-specific lives here.
 */
export interface Surface {
  /** Label, also the key of this surface's upstream in the configuration and a provider's name in the model table. */
  name: string;
  /** Where the surface is mounted, e.g. `/openai/v1`; the rest of the path is the upstream path. */
  mount: string;
  /** The endpoint for a method and route path, `method-not-allowed`, or undefined for an unknown route. */
  match(method: string, path: string): Endpoint | MethodNotAllowed | undefined;
  /** Request headers forwarded upstream (lowercase), credentials included. */
  forwardedHeaders: readonly string[];
  /**
   * Request headers (lowercase) the provider's SDK sends from a browser besides the forwarded ones, which CORS must
   * allow though they never travel upstream (e.g. Anthropic's opt-in to browser use).
   */
  browserHeaders?: readonly string[];
  /** The model the release check (`promptgate selftest`, `/readyz?deep=1`) asks for when the model table names none. */
  selfTestModel: string;
  /** The route a bare request body was sent to where its shape is this API's; undefined where it is not. */
  bareBodyRoute?(body: JsonObject): BareBodyRoute | undefined;
  /**
   * Model name prefixes the shipped model table (used when the policy folder holds no `models.toml`) sends to this
   * provider, e.g. `gemini-`; `defaultModels: true` makes it the provider of every other name.
   */
  shippedModels?: { prefixes: readonly string[]; defaultModels?: boolean };
  /**
   * The request headers (lowercase) that carry a credential, in the order a key is looked for;
   * `authorization` carries it as a bearer token.
   */
  credentialHeaders: readonly string[];
  /** The query parameter that may carry a credential (Gemini's `key`), looked at after the headers. */
  credentialQuery?: string;
  /**
   * The query parameters forwarded upstream, matched exactly by name; every other one is dropped.
   * The credential parameter (`credentialQuery`) needs no entry: it goes upstream only in pass-through.
   */
  forwardedQuery: readonly string[];
  /**
   * The provider's response headers relayed to the client (lowercase) besides `content-type`: request
   * ids, rate-limit and retry information. An entry ending in `*` names a prefix. Every other header
   * (cookies, redirects, authentication challenges, account ids, anything echoing a key) stays here.
   */
  relayedResponseHeaders: readonly string[];
  /**
   * Authenticates a request to the provider with a key (server-held, or the client's for a translated call): puts
   * it where the provider takes it (a header, a query parameter) or signs the request with it.
   */
  authorize(request: UpstreamRequest, key: string): UpstreamRequest | Promise<UpstreamRequest>;
  /** How the configuration finds this provider's upstream. */
  upstream: ProviderUpstream;
  /** The built-in simulated stand-in for this provider, used when no upstream and no key is configured. */
  simulated: SimulatedStandIn;
  /** How metrics and traces name this provider and a route's operation, after the OpenTelemetry GenAI conventions. */
  genAi: GenAiNames;
  /** Reads the provider's native error body into a class; the status decides where it says nothing more. */
  classifyError?: ErrorRecogniser;
  /** The native error shape of this surface. */
  renderError(error: GatewayError, ref: string): RenderedError;
  /** The native server-sent event that ends a stream with an error instead of breaking it off silently. */
  renderStreamError(error: GatewayError, ref: string): string;
  /**
   * Whether a streamed event (its `data`, and `event`, that data parsed where it is a JSON object) is the last of its
   * stream by the surface's protocol (`[DONE]`, `message_stop`, …): the stream ends there, whether or not the
   * provider closes it. Absent where the protocol marks no last event (Gemini): the stream ends when the provider
   * closes it.
   */
  endsStream?(data: string, event: JsonObject | undefined): boolean;
  /**
   * Whether a streamed event (its `data`) marks its stream complete where the protocol's last event is not marked
   * (Gemini: a chunk with a finish reason or a blocked prompt; usage may still follow). A stream of a surface with
   * `endsStream` or this that closes before such an event broke off.
   */
  completesStream?(data: string, event: JsonObject | undefined): boolean;
  /**
   * Whether calls on this surface are routed by the model table, to another provider where the table says so
   * (translated). Only the OpenAI API, which every client speaks; a provider's own API reaches its own provider.
   */
  routesModels?: boolean;
  /** Chat Completions to and from this provider's own API, for OpenAI calls routed to it; absent for OpenAI itself. */
  chatTranslation?: ChatTranslation;
  /** Headers every request translated for this provider carries (e.g. `anthropic-version`). */
  translatedHeaders?: Readonly<Record<string, string>>;
  /** How to estimate a prefix the gateway has no record of, or undefined when it cannot. */
  prefixTokenCount?(prefix: CachedPrefixReference, apiPath: string): PrefixTokenCount | undefined;
}
