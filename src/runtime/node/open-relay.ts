import { isIP } from "node:net";
import { type Config, ConfigError, upstreamOf } from "../../config.js";
import { surfaces } from "../../surfaces/surfaces.js";

/** Whether a listen address is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  const address = host.replace(/^\[|\]$/g, "").toLowerCase();
  return address === "::1" || (isIP(address) === 6 && /^::ffff:127\./.test(address));
}

/**
 * The refusal to listen beyond loopback in pass-through mode while a server-held provider key is set (contract
 * section 11): anyone who reached the port could spend that key. Undefined when the start may go on.
 */
export function openRelayRefusal(config: Config): ConfigError | undefined {
  if (config.gatewayKeyMode || config.openRelay || isLoopback(config.host)) return undefined;
  const keys = surfaces
    .filter((surface) => {
      const upstream = upstreamOf(config, surface.name);
      return upstream.serverKey !== undefined && !upstream.simulated;
    })
    .map((surface) => surface.upstream.keyVariable);
  if (keys.length === 0) return undefined;
  return new ConfigError(
    `HOST=${config.host} listens beyond loopback in pass-through mode while ${keys.join(", ")} ${keys.length === 1 ? "is" : "are"} set, so anyone reaching it could call with that key: make gateway keys (PROMPTGATE_KEYS, or named keys with PROMPTGATE_KEY_MODE=keys), set HOST=127.0.0.1, or PROMPTGATE_OPEN_RELAY=true to allow it.`,
  );
}
