import type { Config } from "../config.js";
import { GatewayError } from "../errors/gateway-error.js";
import { bearerToken, keysEqual } from "../http/keys.js";
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

/**
 * Whether a request may go on: in pass-through always (the provider judges the client's own
 * credential); with gateway keys configured, only when the first credential the client presents
 * equals one of them (compared in constant time, against every key).
 */
export async function authenticated(config: Config, surface: Surface, headers: Headers, url: URL): Promise<boolean> {
  return isGatewayKey(config, presentedCredentials(surface, headers, url)[0]);
}

/**
 * Whether a presented key may go on: always in pass-through; with gateway keys configured, only one of them
 * (compared in constant time, against every key).
 */
export async function isGatewayKey(config: Config, presented: string | undefined): Promise<boolean> {
  if (config.gatewayKeys.length === 0) return true;
  let accepted = false;
  if (presented !== undefined) {
    for (const key of config.gatewayKeys) if (await keysEqual(presented, key)) accepted = true;
  }
  return accepted;
}

/** The fixed refusal of a request without a valid gateway key; it echoes nothing. */
export function authenticationRequired(): GatewayError {
  return new GatewayError("authentication", 401, "A valid gateway key is required.");
}
