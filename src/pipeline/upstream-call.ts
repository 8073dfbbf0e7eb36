import { type Config, type UpstreamConfig, upstreamOf } from "../config.js";
import type { Deps } from "../deps.js";
import type { AbortNotice } from "../http/abort-notice.js";
import {
  keyCredentialOf,
  noCredential,
  routedCredential,
  type UpstreamCredential,
} from "../routing/upstream-credential.js";
import type { Surface } from "../surfaces/surface.js";
import { presentedCredentials } from "./authorize-call.js";
import type { Caller } from "./caller.js";
import type { Deadline } from "./deadline.js";

/** How one call reaches its provider: where, with which credential, until when, and what to keep secret. */
export interface UpstreamCall {
  /** The call's ref, for its log lines. */
  ref: string;
  /** The client's surface: its stream's protocol and its native errors. */
  surface: Surface;
  /** Who the call is: whose cached prefixes it may name, and the credentials its key names. */
  caller: Caller;
  /**
   * The surface whose provider the call reaches: the client's own, or for a translated call the provider a routed
   * model goes to (its upstream, credential header, error classification and relayed headers).
   */
  provider: Surface;
  /** Whether the call is translated for `provider`: no header of the client's goes there, only the key. */
  translated: boolean;
  /** Whether the client asked for a streamed answer: its own request then has a first-byte timeout. */
  streamed: boolean;
  upstream: UpstreamConfig;
  request: Request;
  /** Aborts when the client goes away. */
  client: AbortNotice;
  url: URL;
  credential: UpstreamCredential;
  /** Its signal aborts the provider call when the client goes away or the deadline passes. */
  deadline: Deadline;
  /**
   * What never reaches a record: the configured provider, gateway and admin keys, and the client's credentials.
   * Gathered when a failure's text is kept, the first time it is asked for; a call that succeeds never needs them.
   */
  secrets: () => readonly string[];
  /** The W3C `traceparent` of the call's span, which its provider requests carry; absent without tracing. */
  traceparent?: string | undefined;
  /** When its (last) provider request went out, its answer's head arrived and its body ended (`performance.now()`). */
  timing: UpstreamTiming;
}

/** The times of a provider request, in milliseconds of `performance.now()`; each set once it happened. */
export interface UpstreamTiming {
  startedAt?: number;
  firstByteAt?: number;
  endedAt?: number;
}

/** What a call to the provider starts from. */
export interface UpstreamCallStart {
  traceparent?: string | undefined;
  ref: string;
  surface: Surface;
  caller: Caller;
  request: Request;
  client: AbortNotice;
  url: URL;
  credential: UpstreamCredential;
  deadline: Deadline;
  /** The request's secrets (see `UpstreamCall.secrets`), gathered once for the call and its record. */
  secrets: () => readonly string[];
}

/** The provider call of a request: its upstream, its abort signal and its secrets. */
export function openUpstreamCall(deps: Deps, start: UpstreamCallStart): UpstreamCall {
  // Spelled out rather than spread: a spread of `start` builds the object member by member, several times the cost.
  return {
    ref: start.ref,
    surface: start.surface,
    caller: start.caller,
    request: start.request,
    client: start.client,
    url: start.url,
    credential: start.credential,
    deadline: start.deadline,
    traceparent: start.traceparent,
    provider: start.surface,
    translated: false,
    streamed: false,
    upstream: upstreamOf(deps.config, start.surface.name),
    secrets: start.secrets,
    timing: {},
  };
}

/**
 * The call sent to `provider` (the client's own, or another, translated, with the credential that provider takes),
 * streamed or not as the client asked.
 */
export function routedUpstreamCall(deps: Deps, call: UpstreamCall, provider: Surface, streamed: boolean): UpstreamCall {
  if (provider === call.surface) {
    // A call its own provider serves, which is unconfigured, with no credential of the client's: 403 (a routing
    // surface's authorization could not tell before the model was resolved).
    if (call.credential.kind === "client" && call.upstream.unconfigured) {
      const presents = presentedCredentials(call.surface, call.request.headers, call.url).length > 0;
      if (!presents) throw noCredential(call.surface);
    }
    return call.streamed === streamed ? call : { ...call, streamed };
  }
  const credential = routedCredential(deps.config, provider, keyCredentialOf(deps, call.caller.key, provider.name));
  const upstream = upstreamOf(deps.config, provider.name);
  return { ...call, provider, translated: true, streamed, credential, upstream };
}

/** The keys the configuration holds: gateway keys, server-held provider keys, the admin key. */
export function configSecrets(config: Config): string[] {
  const secrets = [...config.gatewayKeys];
  for (const upstream of Object.values(config.upstreams))
    if (upstream.serverKey !== undefined) secrets.push(upstream.serverKey);
  if (config.adminKey !== undefined) secrets.push(config.adminKey);
  return secrets;
}

/**
 * What no record or log line of a request may carry: the configured provider, gateway and admin
 * keys, and every credential the request presents on `surfaces`.
 */
export function callSecrets(config: Config, surfaces: readonly Surface[], request: Request, url: URL): string[] {
  const secrets = configSecrets(config);
  for (const surface of surfaces) secrets.push(...presentedCredentials(surface, request.headers, url));
  return secrets;
}
