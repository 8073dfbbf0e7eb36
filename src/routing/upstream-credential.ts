import { type Config, upstreamOf } from "../config.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { NamedKey } from "../keys/named-key.js";
import type { Surface } from "../surfaces/surface.js";

/**
 * Which credential a call sends upstream: the client's own (pass-through, contract section 8),
 * or only the server-held key (gateway-key mode; undefined for the simulated provider, which needs none).
 */
export type UpstreamCredential = { kind: "client" } | { kind: "server"; key: string | undefined };

/**
 * The upstream credential of an authenticated call: the one its named key names for the provider (`keyCredential`),
 * else the client's own in pass-through, else the server-held key.
 * 403 `account_selection`, naming the variable to set, when the provider has no upstream, when the call needs a
 * server-held key (gateway keys, or a pass-through client that presents none) that is not set, or when such a key
 * would serve a pass-through caller where the runtime refuses that (`passThroughServerKeys`).
 */
export function upstreamCredential(
  config: Config,
  surface: Surface,
  clientPresents: boolean,
  keyCredential: string | undefined,
): UpstreamCredential {
  const upstream = upstreamOf(config, surface.name);
  if (upstream.unavailable !== undefined) throw unavailableProvider(surface, upstream.unavailable);
  if (keyCredential !== undefined) return { kind: "server", key: keyCredential };
  const variable = surface.upstream.keyVariable;
  if (config.gatewayKeyMode)
    return serverCredential(config, surface, `No provider key is configured for this surface (${variable}).`);
  // A surface that routes models may send the call on to another provider, which takes its own key (routedCredential).
  if (upstream.unconfigured && !clientPresents && !surface.routesModels) throw noCredential(surface);
  if (!clientPresents && upstream.serverKey !== undefined && !upstream.simulated) refuseOpenRelay(config);
  return { kind: "client" };
}

/** 403 for a call to an unconfigured provider that presents no credential of its own: nothing could serve it. */
export function noCredential(surface: Surface): GatewayError {
  return new GatewayError(
    "account_selection",
    403,
    `No credential was presented and no provider key is configured for this surface (${surface.upstream.keyVariable}).`,
  );
}

/**
 * The credential of a call the model table sends to another provider: only ever a server-held key of that provider
 * (the one the call's named key names, else the provider's), in either mode. The client's credential was presented for the client's API and never goes to another provider.
 * A provider that takes no call without a key, with none configured, is 403 `account_selection` before anything
 * is sent, naming the variable to set.
 */
export function routedCredential(
  config: Config,
  provider: Surface,
  keyCredential: string | undefined,
): UpstreamCredential {
  const upstream = upstreamOf(config, provider.name);
  if (upstream.unavailable !== undefined) throw unavailableProvider(provider, upstream.unavailable);
  if (keyCredential !== undefined) return { kind: "server", key: keyCredential };
  if (provider.upstream.keyOptional) {
    if (upstream.serverKey !== undefined && !upstream.simulated && !config.gatewayKeyMode) refuseOpenRelay(config);
    return { kind: "server", key: upstream.serverKey };
  }
  const why = `No provider key is configured for ${provider.name} (${provider.upstream.keyVariable}); a call the model table routes there is sent with that key only, never with the client's.`;
  const credential = serverCredential(config, provider, why);
  if (!upstream.simulated && !config.gatewayKeyMode) refuseOpenRelay(config);
  return credential;
}

/** The server-held key of a provider, or 403 `account_selection` when it has none (and is no simulated one). */
function serverCredential(config: Config, surface: Surface, message: string): UpstreamCredential {
  const upstream = upstreamOf(config, surface.name);
  if (upstream.serverKey === undefined && !upstream.simulated)
    throw new GatewayError("account_selection", 403, message);
  return { kind: "server", key: upstream.serverKey };
}

/** A provider with no upstream to call: 403 naming the variable that gives it one. */
function unavailableProvider(surface: Surface, variable: string): GatewayError {
  return new GatewayError(
    "account_selection",
    403,
    `No upstream is configured for ${surface.name} and it has no public one: set ${variable}.`,
  );
}

/** 403 for a pass-through call that would use a server-held key where anyone may call (contract section 11). */
function refuseOpenRelay(config: Config): void {
  if (config.passThroughServerKeys) return;
  throw new GatewayError(
    "account_selection",
    403,
    "In pass-through mode the server-held provider keys serve no caller here: present your own provider key, set PROMPTGATE_KEYS, or set PROMPTGATE_OPEN_RELAY=true.",
  );
}

/**
 * The server-held credential a named key names for a provider (`credentials`): the value of the variable (Workers:
 * the secret binding) it names, read through `secretNamed`; undefined where the key names none. 403
 * `account_selection` naming the variable, never a value, when it is not set.
 */
export function keyCredentialOf(
  source: { secretNamed: (variable: string) => string | undefined },
  key: NamedKey | undefined,
  provider: string,
): string | undefined {
  const variable = key?.credentials[provider];
  if (variable === undefined) return undefined;
  const value = source.secretNamed(variable);
  if (value === undefined || value === "") {
    throw new GatewayError(
      "account_selection",
      403,
      `This key's credential for ${provider} (${variable}) is not set on the gateway.`,
    );
  }
  return value;
}
