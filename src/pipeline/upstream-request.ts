import { toldSchemaHeader, toldSchemaValue } from "../simulated/told-schema.js";
import type { UpstreamRequest } from "../transport/transport.js";
import type { UpstreamCall } from "./upstream-call.js";

/**
 * The request to send upstream (the client's own, or, with `ownMethod`, one the gateway makes for
 * itself, e.g. a token count): the surface's route path and declared query parameters appended to
 * the upstream base URL, and the surface's forwarded headers. Pass-through sends the client's
 * credential, or the server-held key when the client brought none; gateway-key mode sends only the
 * server-held key, never the client's headers or `key` query parameter. A simulated provider is also told the
 * call's full response schema (`toldSchemaHeader`), where its body carries a projection of it.
 */
export async function upstreamRequest(
  call: UpstreamCall,
  path: string,
  body: Uint8Array<ArrayBuffer> | undefined,
  ownMethod?: string,
  fullSchema?: unknown,
): Promise<UpstreamRequest> {
  const method = ownMethod ?? call.request.method;
  const { provider, request, upstream, credential } = call;
  const headers: Record<string, string> = {};
  if (fullSchema !== undefined && upstream.simulated) headers[toldSchemaHeader] = toldSchemaValue(fullSchema);
  if (call.translated) return translatedRequest(call, path, body, method, headers);
  for (const name of provider.forwardedHeaders) {
    if (credential.kind === "server" && provider.credentialHeaders.includes(name)) continue;
    const value = request.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if (body !== undefined && body.byteLength > 0) headers["content-type"] = "application/json";
  const accept = request.headers.get("accept");
  if (accept !== null) headers.accept = accept;
  if (call.traceparent !== undefined) headers.traceparent = call.traceparent;
  const prepared = {
    url: `${upstream.baseUrl}${path}${upstreamSearch(call, ownMethod === undefined)}`,
    method,
    headers,
    body,
    signal: call.deadline.signal,
  };
  const serverKey = credential.kind === "server" ? credential.key : upstream.serverKey;
  if (serverKey !== undefined && (credential.kind === "server" || !clientHasCredential(call))) {
    return provider.authorize(prepared, serverKey);
  }
  return prepared;
}

/**
 * A request translated for another provider: the path is the provider's own (its query included), and no header of
 * the client's goes there, as they are the client's API's, not the provider's; the key is the provider's
 * server-held one (`routedCredential`), where it has one.
 */
async function translatedRequest(
  call: UpstreamCall,
  path: string,
  body: Uint8Array<ArrayBuffer> | undefined,
  method: string,
  headers: Record<string, string>,
): Promise<UpstreamRequest> {
  const { provider, upstream, credential } = call;
  Object.assign(headers, provider.translatedHeaders);
  if (body !== undefined && body.byteLength > 0) headers["content-type"] = "application/json";
  if (call.traceparent !== undefined) headers.traceparent = call.traceparent;
  const prepared = { url: `${upstream.baseUrl}${path}`, method, headers, body, signal: call.deadline.signal };
  const key = credential.kind === "server" ? credential.key : undefined;
  return key === undefined ? prepared : provider.authorize(prepared, key);
}

function clientHasCredential({ provider, request, url }: UpstreamCall): boolean {
  if (provider.credentialHeaders.some((name) => request.headers.has(name))) return true;
  return provider.credentialQuery !== undefined && url.searchParams.has(provider.credentialQuery);
}

/**
 * The query sent upstream, rebuilt (so a `;` or stray encoding in the client's query cannot
 * smuggle a parameter past the list). The client's own call keeps only its surface's declared
 * parameters, matched exactly by name; in pass-through, the credential parameter goes too (once,
 * the value presented), for a gateway-made request as well. Anything else (`?api_key=`, `?KEY=`)
 * is dropped.
 */
function upstreamSearch({ provider, url, credential }: UpstreamCall, clientsCall: boolean): string {
  if (url.search === "") return "";
  const credentialName = credential.kind === "client" ? provider.credentialQuery : undefined;
  const query = new URLSearchParams();
  let credentialSent = false;
  for (const [name, value] of url.searchParams) {
    if (name === credentialName) {
      if (!credentialSent) query.append(name, value);
      credentialSent = true;
    } else if (clientsCall && provider.forwardedQuery.includes(name)) {
      query.append(name, value);
    }
  }
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}
