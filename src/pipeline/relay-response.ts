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
 * The client's response from the provider's: a successful stream passes through as it
 * arrives, anything else is read whole. Hop-by-hop headers are dropped.
 */
export async function relayResponse(
  upstream: UpstreamResponse,
  stream: boolean,
  extraHeaders: Record<string, string>,
): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (!droppedHeaders.has(name)) headers.set(name, value);
  }
  for (const [name, value] of Object.entries(extraHeaders)) headers.set(name, value);
  const ok = upstream.status >= 200 && upstream.status < 300;
  const body = stream && ok ? upstream.stream() : await upstream.bytes();
  return new Response(upstream.status === 204 || upstream.status === 304 ? null : body, {
    status: upstream.status,
    headers,
  });
}
