import type { Deps, UpstreamResponse } from "../deps.js";
import { jsonObjectOf } from "../json/json-object-of.js";
import type { ProxyEndpoint } from "../surfaces/surface.js";
import { isSuccess, relayedHeaders, relayResponse } from "./relay-response.js";
import { rememberPrefix } from "./remember-prefix.js";

/**
 * Relays a proxied route's answer; when the route changes a prefix the gateway keeps (a
 * cached content re-dated or deleted), a successful answer updates the record.
 */
export async function relayProxied(
  deps: Deps,
  endpoint: ProxyEndpoint,
  path: string,
  response: UpstreamResponse,
  headers: Record<string, string>,
): Promise<Response> {
  if (endpoint.prefixEffect === undefined || !isSuccess(response.status)) {
    return relayResponse(response, headers);
  }
  const bytes = await response.bytes();
  const body = bytes.length === 0 ? {} : jsonObjectOf(bytes);
  const effect = body === undefined ? undefined : endpoint.prefixEffect(body, path, deps.now().getTime());
  if (effect !== undefined) await rememberPrefix(deps, effect, undefined);
  return new Response(bytes, { status: response.status, headers: relayedHeaders(response, headers) });
}
