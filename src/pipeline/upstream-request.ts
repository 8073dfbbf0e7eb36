import type { UpstreamRequest } from "../deps.js";
import type { UpstreamCall } from "./upstream-call.js";

/**
 * The request to send upstream (the client's own, or, with `ownMethod`, one the gateway makes for
 * itself, e.g. a token count): the surface's route path and query appended to the upstream
 * base URL and the surface's forwarded headers. Pass-through sends the client's credential, or
 * the server-held key when the client brought none; gateway-key mode sends only the server-held
 * key, never the client's headers or `key` query parameter.
 */
export function upstreamRequest(
  call: UpstreamCall,
  path: string,
  body: Uint8Array<ArrayBuffer> | undefined,
  ownMethod?: string,
): UpstreamRequest {
  const method = ownMethod ?? call.request.method;
  const { surface, request, upstream, credential } = call;
  const headers: Record<string, string> = {};
  for (const name of surface.forwardedHeaders) {
    if (credential.kind === "server" && surface.credentialHeaders.includes(name)) continue;
    const value = request.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const serverKey = credential.kind === "server" ? credential.key : upstream.serverKey;
  if (serverKey !== undefined && (credential.kind === "server" || !clientHasCredential(call))) {
    const [name, value] = surface.serverCredential(serverKey);
    headers[name] = value;
  }
  if (body !== undefined && body.byteLength > 0) headers["content-type"] = "application/json";
  const accept = request.headers.get("accept");
  if (accept !== null) headers.accept = accept;
  return {
    url: `${upstream.baseUrl}${path}${upstreamSearch(call, ownMethod === undefined)}`,
    method,
    headers,
    body,
    signal: call.deadline.signal,
  };
}

function clientHasCredential({ surface, request, url }: UpstreamCall): boolean {
  if (surface.credentialHeaders.some((name) => request.headers.has(name))) return true;
  return surface.credentialQuery !== undefined && url.searchParams.has(surface.credentialQuery);
}

/**
 * The query sent upstream. The client's own call keeps its query, less a credential parameter in
 * gateway-key mode; a gateway-made GET keeps only the client's credential parameter (pass-through).
 */
function upstreamSearch({ surface, url, credential }: UpstreamCall, clientsCall: boolean): string {
  const name = surface.credentialQuery;
  if (clientsCall) {
    if (credential.kind === "client" || name === undefined || !url.searchParams.has(name)) return url.search;
    const query = new URLSearchParams(url.search);
    query.delete(name);
    const text = query.toString();
    return text === "" ? "" : `?${text}`;
  }
  if (credential.kind === "server" || name === undefined) return "";
  const key = url.searchParams.get(name);
  return key === null ? "" : `?${new URLSearchParams({ [name]: key })}`;
}
