import type { DepsOf } from "../deps.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import type { AbortNotice } from "../http/abort-notice.js";
import { canonicalJson } from "../json/canonical-json.js";
import type { JsonObject } from "../json/json-object.js";
import type { Recorder } from "../pipeline/call-recorder.js";
import type { SurfaceRequest } from "../pipeline/surface-request.js";
import { deadlineSecondsOf, type PolicyVersion, sessionLimitsOf } from "../policy/policy.js";
import type {
  ResponseHistoryRecord,
  ResponseHistoryStore,
  SecretStore,
  SessionRecord,
  SessionStore,
} from "../store/store.js";
import type { SessionRoute } from "../surfaces/surface.js";

/** What sessions use of the gateway: the store's sessions, response histories and secret. */
type SessionDeps = DepsOf<SessionStore & ResponseHistoryStore & SecretStore>;

/** The principal of a request whose key was checked (`SurfaceRequest.caller`). */
export function callerOf(input: SurfaceRequest): Promise<string> {
  if (input.caller === undefined) throw new Error("A request's principal was asked for before its key was checked.");
  return input.caller.principal();
}

/**
 * Lets a request reach a stored response (retrieve, delete, cancel, list its input) only when it is the caller's:
 * a response of another principal's session is 404, as an unknown one is. A response the gateway did not see made
 * is the provider's to judge in pass-through, where the caller's own key goes there; with gateway keys, where every
 * caller shares the provider key, it is 404 too.
 */
export async function ownStoredResponse(deps: SessionDeps, input: SurfaceRequest, id: string): Promise<void> {
  const history = await deps.store.getResponseHistory(id, deps.now().getTime());
  const session = history?.session === undefined ? undefined : await deps.store.getSession(history.session);
  const mine = session === undefined ? !deps.config.gatewayKeyMode : session.principal === (await callerOf(input));
  if (!mine) throw new GatewayError("NOT_FOUND", 404, `No response found with id '${shownId(id)}'.`);
}

/** A response id as a message may repeat it: only when it looks like one. */
function shownId(id: string): string {
  return /^[A-Za-z0-9_-]{1,256}$/.test(id) ? id : "(not an id)";
}

/** The settings a session's first turn fixes: a continuation may omit them, never change them. */
export interface SessionSettings {
  model: string | undefined;
  reasoning: string | undefined;
  profile: string | undefined;
}

/**
 * One turn of a follow-up session, as the call runs: the session it continues (none for a first turn), and what
 * the answer's stored response is kept with once it is known.
 */
export interface SessionTurn {
  /** The session continued; undefined when this turn may start one. */
  session: SessionRecord | undefined;
  /** The keyed hash of the caller's credential. */
  principal: string;
  /** The response this turn continues. */
  previous: string | undefined;
  /** The turn's settings, the session's where the request omits them. */
  settings: SessionSettings;
  /** The client's body as the client sent it, whose input items a held session keeps. */
  clientBody: JsonObject;
  /** How the route reads and writes a session's parts of a body. */
  route: SessionRoute;
}

/** What opening a turn gives the call: the body to go on with (changed where a setting is inherited or history rebuilt). */
export interface OpenedTurn {
  turn: SessionTurn;
  /** The body with the session's settings where it omits them and, for a held session, its whole history; undefined when unchanged. */
  body: JsonObject | undefined;
}

/** The most turns a held history is rebuilt from; a longer chain is refused rather than walked without end. */
const maxTurns = 10_000;

/** How long a waiting turn sleeps between looks at its session's turn (other processes may hold it). */
const pollMs = 25;

/**
 * Opens a turn of a follow-up session, before anything is measured. A request that names a previous response must
 * name one of the caller's own (unknown and foreign are answered alike, as OpenAI answers an unknown id), of a
 * session not expired, under the session's model, reasoning level, call label, policy version and model routing;
 * a setting it omits is the session's. The turn then waits for the session's previous turn to end (one turn of a
 * session runs at a time, forks included), up to the policy's queue deadline. Where the gateway holds the history
 * (the provider keeps none), the whole history goes into the body in place of the previous response's id.
 */
export async function openSessionTurn(
  deps: SessionDeps,
  input: SurfaceRequest,
  route: SessionRoute,
  body: JsonObject,
  context: {
    policy: PolicyVersion;
    recorder: Recorder;
    requestedReasoning: string | undefined;
    /** Whether the call runs the turn now (false for one that becomes an answer job, whose run takes its turn). */
    claim: boolean;
  },
): Promise<OpenedTurn> {
  const { policy, recorder } = context;
  const { record } = recorder;
  const previous = route.previousOf(body);
  if (previous !== undefined && route.conversationOf(body)) {
    throw invalidRequest(
      "'previous_response_id' and 'conversation' cannot be used together; send one of them. Nothing was sent.",
      "conversation",
    );
  }
  const principal = await callerOf(input);
  const requested: SessionSettings = {
    model: typeof body.model === "string" ? body.model : undefined,
    reasoning: context.requestedReasoning,
    profile: record.call_label,
  };
  const turn: SessionTurn = { session: undefined, principal, previous, settings: requested, clientBody: body, route };
  if (previous === undefined) return { turn, body: undefined };

  const now = deps.now().getTime();
  const history = await deps.store.getResponseHistory(previous, now);
  const session = history?.session === undefined ? undefined : await deps.store.getSession(history.session);
  if (history === undefined || session === undefined || session.principal !== principal) {
    throw sessionError("SESSION_NOT_FOUND", previous);
  }
  const limits = sessionLimitsOf(policy.policy);
  const hour = 60 * 60 * 1000;
  if (now - session.lastTurnAt > limits.idle_hours * hour || now - session.startedAt > limits.max_days * 24 * hour) {
    throw sessionError("SESSION_EXPIRED", previous);
  }
  const settings = pinnedSettings(session, requested);
  selectionUnchanged(deps, session, policy, settings.model);
  recorder.noteCallLabel(settings.profile);
  turn.session = session;
  turn.settings = settings;

  if (context.claim) {
    const holdSeconds = deadlineSecondsOf(policy.policy) + limits.queue_seconds;
    const waiting = { queueSeconds: limits.queue_seconds, holdSeconds };
    await claimTurn(deps, session, record.ref, waiting, input.client);
    recorder.hold(() => deps.store.releaseSessionTurn(session.id, record.ref));
  }

  let changed = settings.model !== requested.model || settings.reasoning !== requested.reasoning;
  let sent = changed ? route.withSettings(body, settings) : body;
  if (session.held) {
    sent = route.withHistory(sent, await heldHistory(deps, history, now));
    changed = true;
  } else if (history.upstream !== undefined) {
    // An answer job's id: the provider knows the response by its own.
    sent = route.withPrevious(sent, history.upstream);
    changed = true;
  }
  return { turn, body: changed ? sent : undefined };
}

/**
 * The session's settings where the request omits them; a setting the request names otherwise is 400
 * SESSION_SETTINGS_CHANGED naming it.
 */
function pinnedSettings(session: SessionRecord, requested: SessionSettings): SessionSettings {
  const pinned: SessionSettings = { model: session.model, reasoning: session.reasoning, profile: session.profile };
  const fields: [keyof SessionSettings, string][] = [
    ["model", "model"],
    ["reasoning", "reasoning.effort"],
    ["profile", "x-promptgate-call"],
  ];
  for (const [setting, param] of fields) {
    const asked = requested[setting];
    if (asked !== undefined && asked !== pinned[setting]) {
      throw new GatewayError(
        "SESSION_SETTINGS_CHANGED",
        400,
        `This session's ${setting} was fixed by its first turn and cannot change; start a new session (omit 'previous_response_id') to use another. Nothing was sent.`,
        { param },
      );
    }
  }
  return pinned;
}

/** A selection change (the policy version, or the model table's entry for the session's model) ends a session. */
function selectionUnchanged(
  deps: SessionDeps,
  session: SessionRecord,
  policy: PolicyVersion,
  model: string | undefined,
): void {
  const what =
    session.policy !== policy.ref
      ? "policy version"
      : session.selection !== selectionOf(deps, model)
        ? "model routing"
        : undefined;
  if (what === undefined) return;
  throw new GatewayError(
    "SESSION_SETTINGS_CHANGED",
    400,
    `The ${what} changed since this session started, and a session never continues across such a change; start a new session (omit 'previous_response_id'). Nothing was sent.`,
    { param: "previous_response_id" },
  );
}

/** The model table's entry for a model as canonical JSON: what a selection change is measured against. */
export function selectionOf(deps: SessionDeps, model: string | undefined): string {
  return model === undefined ? "" : canonicalJson(deps.models.resolve(model));
}

/**
 * OpenAI's own answer to a previous response it does not know, which its SDKs surface as such, with the gateway's
 * code in the `promptgate` member: the same whether the id is unknown, another principal's or expired.
 */
function sessionError(code: "SESSION_NOT_FOUND" | "SESSION_EXPIRED", id: string): GatewayError {
  return new GatewayError(code, 400, `Previous response with id '${shownId(id)}' not found.`, {
    param: "previous_response_id",
    nativeCode: "previous_response_not_found",
  });
}

/**
 * Waits until this call holds its session's turn: polls the store (another process may hold it), until the queue
 * deadline, then `timeout`. A hold runs out after the policy's call deadline plus the queue's, so a holder that died
 * frees the session.
 */
async function claimTurn(
  deps: SessionDeps,
  session: SessionRecord,
  holder: string,
  { queueSeconds, holdSeconds }: { queueSeconds: number; holdSeconds: number },
  signal: AbortNotice,
): Promise<void> {
  const started = deps.now().getTime();
  for (;;) {
    const now = deps.now().getTime();
    if (await deps.store.claimSessionTurn(session.id, holder, now + holdSeconds * 1000, now)) return;
    if (now - started >= queueSeconds * 1000) {
      throw new GatewayError(
        "timeout",
        504,
        "The session's previous turn did not end within the queue deadline; try again once it has.",
      );
    }
    if (signal.aborted) throw new GatewayError("timeout", 504, "The client went away while the turn waited.");
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The held history a turn continues: the items of every turn of its chain, oldest first. */
async function heldHistory(deps: SessionDeps, last: ResponseHistoryRecord, now: number): Promise<unknown[]> {
  const turns: unknown[][] = [];
  let record = last;
  for (;;) {
    if (record.items === undefined || turns.length >= maxTurns) {
      throw new GatewayError("internal", 500, "The session's history could not be rebuilt.");
    }
    turns.push(record.items);
    if (record.previous === undefined) return turns.reverse().flat();
    const older = await deps.store.getResponseHistory(record.previous, now);
    // An older turn gone (its record expired) leaves a history that cannot be rebuilt whole: never a shorter one.
    if (older === undefined) throw sessionError("SESSION_EXPIRED", last.id);
    record = older;
  }
}

/**
 * The session caps, on the provider check's size (the whole history included): a first turn's estimated tokens
 * over `max_start_tokens`, or any turn's over `max_total_tokens`, is 400 SESSION_TOKEN_LIMIT before anything is sent.
 */
export function checkSessionCaps(turn: SessionTurn, size: PromptSize, policy: PolicyVersion): void {
  const limits = sessionLimitsOf(policy.policy);
  const tokens = Math.ceil(size.total_chars / policy.policy.cache.chars_per_token);
  const starting = turn.session === undefined;
  const cap = starting ? Math.min(limits.max_start_tokens, limits.max_total_tokens) : limits.max_total_tokens;
  if (tokens <= cap) return;
  throw new GatewayError(
    "SESSION_TOKEN_LIMIT",
    400,
    `This ${starting ? "session start" : "session turn"} carries about ${tokens} tokens (${size.total_chars} characters at ${policy.policy.cache.chars_per_token} per token), over the policy's cap of ${cap}; nothing was sent or truncated. Start a new, smaller session.`,
    { promptSize: size },
  );
}

/** A turn whose answer has come: what its stored response is kept with. */
export interface AnsweredTurn {
  turn: SessionTurn;
  /** Whether the answer came translated from a provider that keeps no history, so that the gateway holds it. */
  translated: boolean;
  /** The policy version the turn ran under. */
  policy: string;
  /** The model that answered in place of the one asked for, when a fallback did. */
  fallbackModel?: string | undefined;
}

/** A stored response's history as the answer left it: its id, cumulative size and expiry. */
export type StoredHistory = Pick<ResponseHistoryRecord, "id" | "chars" | "outputKnown" | "expiresAt">;

/**
 * Keeps a turn's stored response, before its id reaches the client: a first turn starts its session (the settings
 * it ran with become the session's, the model that answered among them), a later one notes its time; the response says which session and response it
 * continues and, where the gateway holds the history, carries this turn's input and output items.
 */
export async function keepTurn(deps: SessionDeps, answered: AnsweredTurn, stored: StoredHistory, answer: JsonObject) {
  const { turn } = answered;
  const now = deps.now().getTime();
  const held = turn.session?.held ?? answered.translated;
  const session = turn.session?.id ?? stored.id;
  if (turn.session === undefined) {
    const { reasoning, profile } = turn.settings;
    // The session runs on the model that answered its first turn: a fallback's, where one answered.
    const model = answered.fallbackModel ?? turn.settings.model;
    const started = await deps.store.putSession({
      id: session,
      principal: turn.principal,
      model: model ?? "",
      reasoning,
      profile,
      policy: answered.policy,
      selection: selectionOf(deps, model),
      held,
      startedAt: now,
      lastTurnAt: now,
    });
    // A provider that gives an id twice never makes one principal's session another's: the second is not kept.
    if (!started) throw new Error("The provider answered with a response id that another principal's session holds.");
  } else {
    await deps.store.touchSession(session, now);
  }
  await deps.store.putResponseHistory({
    ...stored,
    session,
    ...(turn.previous === undefined ? {} : { previous: turn.previous }),
    ...(held ? { items: turn.route.turnItems(turn.clientBody, answer) } : {}),
  });
}
