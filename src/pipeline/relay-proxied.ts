import type { Deps, UpstreamResponse } from "../deps.js";
import type { ProxyEndpoint } from "../surfaces/surface.js";
import { isObject } from "../surfaces/wire-fields.js";
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
  let body: unknown;
  try {
    body = bytes.length === 0 ? {} : JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    body = undefined;
  }
  const effect = isObject(body) ? endpoint.prefixEffect(body, path, deps.now().getTime()) : undefined;
  if (effect !== undefined) await rememberPrefix(deps, effect, undefined);
  return new Response(bytes, { status: response.status, headers: relayedHeaders(response, headers) });
}
