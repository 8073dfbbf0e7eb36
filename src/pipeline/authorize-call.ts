import { GatewayError } from "../errors/gateway-error.js";
import { bearerToken } from "../http/keys.js";
import type { Surface } from "../surfaces/surface.js";

/** The credentials a request presents on a surface, in the surface's order (headers, then the query). */
export function presentedCredentials(surface: Surface, headers: Headers, url: URL): string[] {
  const presented: string[] = [];
  for (const name of surface.credentialHeaders) {
    const value = headers.get(name);
    const key = name === "authorization" ? bearerToken(value) : (value?.trim() ?? undefined);
    if (key !== undefined && key !== "") presented.push(key);
  }
  const query = surface.credentialQuery === undefined ? null : url.searchParams.get(surface.credentialQuery);
  if (query !== null && query !== "") presented.push(query);
  return presented;
}

/** The fixed refusal of a request without a valid gateway key; it echoes nothing. */
export function authenticationRequired(): GatewayError {
  return new GatewayError("authentication", 401, "A valid gateway key is required.");
}
