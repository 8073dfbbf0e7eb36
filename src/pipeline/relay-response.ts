import type { UpstreamResponse } from "../deps.js";

const droppedHeaders = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "proxy-connection",
  "upgrade",
  "trailer",
  "te",
]);

/**
 * The provider's response headers without hop-by-hop ones, plus the gateway's own. A plain
 * object of lowercase names (as both transports give them), which the Node server writes
 * without building a `Headers`.
 */
export function relayedHeaders(
  upstream: UpstreamResponse,
  extraHeaders: Record<string, string>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (!droppedHeaders.has(name)) headers[name] = value;
  }
  for (const [name, value] of Object.entries(extraHeaders)) headers[name.toLowerCase()] = value;
  return headers;
}

/** Whether a status is a success. */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The client's response from the provider's, read whole (a stream goes through `relayStream`). */
export async function relayResponse(
  upstream: UpstreamResponse,
  extraHeaders: Record<string, string>,
): Promise<Response> {
  const body = await upstream.bytes();
  return new Response(upstream.status === 204 || upstream.status === 304 ? null : body, {
    status: upstream.status,
    headers: relayedHeaders(upstream, extraHeaders),
  });
}
