import type { UpstreamConfig } from "../config.js";
import type { UpstreamRequest } from "../deps.js";
import type { Surface } from "../surfaces/surface.js";

/**
 * The request to send upstream: the surface's route path and query appended to the
 * upstream base URL, the surface's forwarded headers, and the server-held key when the
 * client brought no credential of its own.
 */
export function upstreamRequest(
  surface: Surface,
  upstream: UpstreamConfig,
  request: Request,
  url: URL,
  path: string,
  body: Uint8Array<ArrayBuffer> | undefined,
  method = request.method,
): UpstreamRequest {
  const headers: Record<string, string> = {};
  for (const name of surface.forwardedHeaders) {
    const value = request.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if (upstream.serverKey !== undefined && !surface.hasCredential(request.headers, url)) {
    const [name, value] = surface.serverCredential(upstream.serverKey);
    headers[name] = value;
  }
  if (body !== undefined) headers["content-type"] = "application/json";
  const accept = request.headers.get("accept");
  if (accept !== null) headers.accept = accept;
  // A gateway-made GET keeps only the query's credential (Gemini's `key`), nothing of the client's call.
  const search = method === request.method ? url.search : credentialQuery(url);
  return {
    url: `${upstream.baseUrl}${path}${search}`,
    method,
    headers,
    body,
    signal: request.signal,
  };
}

function credentialQuery(url: URL): string {
  const key = url.searchParams.get("key");
  return key === null ? "" : `?${new URLSearchParams({ key })}`;
}
