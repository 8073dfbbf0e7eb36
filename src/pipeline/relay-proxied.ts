import type { Deps, UpstreamResponse } from "../deps.js";
import { classifyTransportFailure, classifyUpstreamAnswer } from "../errors/classify.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { ProxyEndpoint } from "../surfaces/surface.js";
import type { JsonObject } from "../surfaces/wire-fields.js";
import { isSuccess, relayedHeaders, relayResponse } from "./relay-response.js";
import { relayStream, type StreamFailures } from "./relay-stream.js";
import { rememberPrefix } from "./remember-prefix.js";
import type { UpstreamCall } from "./upstream-call.js";

/** The provider call of a proxied route and its policy: what rendering a stream's failures natively needs. */
export interface ProxiedCall {
  call: UpstreamCall;
  policy: PolicyVersion;
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
  if (isSuccess(response.status) && isEventStream(response)) {
    return relayProxiedStream(deps, endpoint, path, response, headers, proxied);
  }
  if (endpoint.prefixEffect === undefined || !isSuccess(response.status)) {
    return relayResponse(response, headers);
  }
  const bytes = await response.bytes();
  const body = bytes.length === 0 ? {} : jsonObjectOf(bytes);
  if (body !== undefined) await remember(deps, endpoint, path, body);
  // A 204 (a compatible server's answer to a deletion) may carry no body, not even an empty one.
  const sent = response.status === 204 ? null : bytes;
  return new Response(sent, { status: response.status, headers: relayedHeaders(response, headers) });
}

function isEventStream(response: UpstreamResponse): boolean {
  return (response.headers["content-type"] ?? "").includes("text/event-stream");
}

async function remember(deps: Deps, endpoint: ProxyEndpoint, path: string, body: JsonObject): Promise<void> {
  const effect = endpoint.prefixEffect?.(body, path, deps.now().getTime());
  if (effect !== undefined) await rememberPrefix(deps, effect, undefined);
}

/**
 * A proxied stream, relayed event by event. A stream that ends normally with a final response
 * is remembered before the client's stream closes, so that the client's next call finds the record.
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
  let remembered: Promise<void> = Promise.resolve();
  const relayed = relayStream(
    response.stream(),
    response.headers["content-type"] ?? "",
    {
      onEvent(event) {
        finalResponse = endpoint.finalResponseOf?.(event) ?? finalResponse;
      },
      onEnd(complete) {
        if (!complete || finalResponse === undefined) return;
        // A record left unwritten is safe: the response stays unknown, which the policy's unknown-prefix rule covers.
        remembered = remember(deps, endpoint, path, finalResponse).catch(() => undefined);
      },
    },
    proxiedStreamFailures(deps, proxied, headers["x-promptgate-ref"] ?? ""),
  );
  const body =
    endpoint.finalResponseOf === undefined
      ? relayed
      : relayed.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: () => remembered }));
  return new Response(body, { status: response.status, headers: relayedHeaders(response, headers) });
}

/**
 * A proxied stream's failures in the surface's native error events, as a measured stream's are;
 * the call is recorded already, so they only reach the client.
 */
function proxiedStreamFailures(deps: Deps, { call, policy }: ProxiedCall, ref: string): StreamFailures {
  return {
    replaceErrorEvent(data) {
      if (policy.policy.upstream_errors.text === "passthrough") return undefined;
      const error = classifyUpstreamAnswer(
        { status: undefined, headers: {}, text: data },
        { recognise: call.surface.classifyError, now: deps.now().getTime(), secrets: call.secrets },
      );
      return call.surface.renderStreamError(error, ref);
    },
    breakOff(cause) {
      const error = classifyTransportFailure(cause, call.deadline.passed(), call.secrets);
      return call.surface.renderStreamError(error, ref);
    },
  };
}
