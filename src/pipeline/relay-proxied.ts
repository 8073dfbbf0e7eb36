import type { Deps } from "../deps.js";
import { classifyTransportFailure, classifyUpstreamAnswer, upstreamFailure } from "../errors/classify.js";
import { isObject, type JsonObject } from "../json/json-object.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import { mayReach } from "../keys/key-bindings.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { CachedPrefixList, ProxyEndpoint } from "../surfaces/surface.js";
import type { UpstreamResponse } from "../transport/transport.js";
import { gatewayGuardsPrefixes, ownPrefixList } from "./cached-prefix-owner.js";
import type { CallRecorder } from "./call-recorder.js";
import { isSuccess, relayedHeaders, relayResponse } from "./relay-response.js";
import { relayStream, type StreamFailures, streamProtocol } from "./relay-stream.js";
import { rememberAnswer } from "./remember-prefix.js";
import { sendUpstream } from "./send-upstream.js";
import type { UpstreamCall } from "./upstream-call.js";

/** The provider call of a proxied route, its policy and its record: what rendering a stream's failures natively needs. */
export interface ProxiedCall {
  call: UpstreamCall;
  policy: PolicyVersion;
  /** Kept once the answer goes out; a stream's later failures of the gateway's own are only logged. */
  recorder: CallRecorder;
}

/**
 * Relays a proxied route's answer; when the route changes a prefix the gateway keeps (a
 * cached content re-dated or deleted, a stored response seen ended or deleted), a successful
 * answer updates the record. A server-sent event stream (e.g. a background response retrieved
 * with `stream=true`) passes through as it arrives, and its final response, if any, is read at
 * its end.
 */
export async function relayProxied(
  deps: Deps,
  endpoint: ProxyEndpoint,
  path: string,
  response: UpstreamResponse,
  headers: Record<string, string>,
  proxied: ProxiedCall,
): Promise<Response> {
  // Read before anything else is: a list of cached prefixes never reaches a caller unfiltered, whatever its type.
  if (endpoint.listsCachedPrefixes !== undefined && isSuccess(response.status)) {
    return withOwnPrefixes(deps, endpoint.listsCachedPrefixes, path, response, headers, proxied);
  }
  if (isSuccess(response.status) && isEventStream(response)) {
    return relayProxiedStream(deps, endpoint, path, response, headers, proxied);
  }
  if (endpoint.listsModels && isSuccess(response.status)) {
    return withTableModels(deps, response, headers, proxied);
  }
  if (endpoint.prefixEffect === undefined || !isSuccess(response.status)) {
    return relayResponse(proxied.call, response, headers);
  }
  const bytes = await response.bytes();
  const body = bytes.length === 0 ? {} : jsonObjectOf(bytes);
  if (body !== undefined) await remember(deps, endpoint, path, body, proxied.recorder);
  // A 204 (a compatible server's answer to a deletion) may carry no body, not even an empty one.
  const sent = response.status === 204 ? null : bytes;
  return new Response(sent, {
    status: response.status,
    headers: relayedHeaders(proxied.call, response, headers),
  });
}

/**
 * The provider's model list with the model table's named models added (those it does not list itself), each as a
 * model object owned by the provider the table routes it to, and only the models the caller's named key may reach.
 * A list that is no JSON object with a `data` array goes as it came.
 */
async function withTableModels(
  deps: Deps,
  response: UpstreamResponse,
  headers: Record<string, string>,
  proxied: ProxiedCall,
): Promise<Response> {
  const bytes = await response.bytes();
  const body = jsonObjectOf(bytes);
  let sent: Uint8Array<ArrayBuffer> | string = bytes;
  if (body !== undefined && Array.isArray(body.data)) {
    const listed = new Set(body.data.map((model) => (isObject(model) ? model.id : undefined)));
    const added = deps.models
      .listed()
      .filter((entry) => !listed.has(entry.name))
      .map((entry) => ({ id: entry.name, object: "model", created: 0, owned_by: entry.provider }));
    const key = proxied.call.caller.key;
    const reachable = [...body.data, ...added].filter(
      (model) => key === undefined || (isObject(model) && typeof model.id === "string" && mayReach(key, model.id)),
    );
    sent = JSON.stringify({ ...body, data: reachable });
  }
  return new Response(sent, { status: response.status, headers: relayedHeaders(proxied.call, response, headers) });
}

/**
 * The provider's list of cached prefixes as the caller may see it (see `ownPrefixList`), a further page asked for
 * as the client asked for the first, with the provider's token. With gateway keys, an answer that is no JSON object
 * is the provider's failure, never relayed unread.
 */
async function withOwnPrefixes(
  deps: Deps,
  reading: CachedPrefixList,
  path: string,
  response: UpstreamResponse,
  headers: Record<string, string>,
  proxied: ProxiedCall,
): Promise<Response> {
  const { call } = proxied;
  const bytes = await response.bytes();
  const list = jsonObjectOf(bytes);
  let sent: Uint8Array<ArrayBuffer> | string = bytes;
  if (list !== undefined) {
    const nextPage = async (token: string) => {
      const url = new URL(call.url);
      url.searchParams.set(reading.pageTokenParameter, token);
      const next = await sendUpstream(deps, { ...call, url }, path, undefined);
      const nextBytes = await next.bytes();
      return isSuccess(next.status) ? jsonObjectOf(nextBytes) : undefined;
    };
    sent = JSON.stringify(await ownPrefixList(deps, call, list, reading, nextPage));
  } else if (gatewayGuardsPrefixes(deps)) {
    const text = `The provider's answer (${bytes.length} bytes) is not a JSON object.`;
    throw upstreamFailure("upstream", response.status, text, call.secrets(), undefined, "malformed_answer");
  }
  return new Response(sent, { status: response.status, headers: relayedHeaders(call, response, headers) });
}

function isEventStream(response: UpstreamResponse): boolean {
  return (response.headers["content-type"] ?? "").includes("text/event-stream");
}

/** Remembers a successful answer's prefix effect, if the route has one (see `rememberAnswer`). */
function remember(
  deps: Deps,
  endpoint: ProxyEndpoint,
  path: string,
  response: JsonObject,
  recorder: CallRecorder,
): Promise<void> {
  return rememberAnswer(deps, endpoint.prefixEffect, { response, path, measured: undefined }, recorder);
}

/**
 * A proxied stream, relayed event by event. A stream that ends normally with a final response
 * is remembered before its last bytes reach the client, so that the client's next call finds the record.
 */
function relayProxiedStream(
  deps: Deps,
  endpoint: ProxyEndpoint,
  path: string,
  response: UpstreamResponse,
  headers: Record<string, string>,
  proxied: ProxiedCall,
): Response {
  let finalResponse: JsonObject | undefined;
  const relayed = relayStream(
    response.stream(),
    response.headers["content-type"] ?? "",
    {
      ...streamProtocol(proxied.call.surface),
      onEvent(event) {
        finalResponse = endpoint.finalResponseOf?.(event) ?? finalResponse;
      },
      async onEnd(complete) {
        if (complete && finalResponse !== undefined) {
          await remember(deps, endpoint, path, finalResponse, proxied.recorder);
        }
      },
    },
    proxiedStreamFailures(deps, proxied, headers["x-promptgate-ref"] ?? ""),
  );
  return new Response(relayed, {
    status: response.status,
    headers: relayedHeaders(proxied.call, response, headers),
  });
}

/**
 * A proxied stream's failures in the surface's native error events, as a measured stream's are;
 * the call is recorded already, so they only reach the client.
 */
function proxiedStreamFailures(deps: Deps, { call, policy, recorder }: ProxiedCall, ref: string): StreamFailures {
  return {
    replaceErrorEvent(data) {
      if (policy.policy.upstream_errors.text === "passthrough") return undefined;
      const error = classifyUpstreamAnswer(
        { status: undefined, headers: {}, text: data },
        { recognise: call.provider.classifyError, now: deps.now().getTime(), secrets: call.secrets() },
      );
      return call.surface.renderStreamError(error, ref);
    },
    breakOff(cause) {
      const error = classifyTransportFailure(cause, call.deadline.passed(), call.secrets());
      return call.surface.renderStreamError(error, ref);
    },
    internal(cause) {
      recorder.internal(cause, "stream");
    },
  };
}
