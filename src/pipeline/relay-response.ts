import { upstreamFailure } from "../errors/classify.js";
import type { UpstreamResponse } from "../transport/transport.js";
import type { UpstreamCall } from "./upstream-call.js";

/** What decides which provider headers reach the client: its surface, and whether its provider is simulated. */
export type RelaySource = Pick<UpstreamCall, "provider" | "upstream">;

/** The simulated provider's label on its answers (contract section 1), relayed from it alone. */
const simulatedLabel = "x-promptgate-simulated";

/**
 * The provider's response headers that the surface allows (always `content-type`, and the
 * simulated provider's label from it), plus the gateway's own. Everything else stays at the
 * gateway: hop-by-hop and framing headers, and whatever a provider or a proxy in front of it adds
 * (cookies, `location`, authentication challenges, account ids, a header echoing a key). A plain
 * object of lowercase names (as both transports give them), which the Node server writes without
 * building a `Headers`.
 */
export function relayedHeaders(
  source: RelaySource,
  upstream: UpstreamResponse,
  extraHeaders: Record<string, string>,
): Record<string, string> {
  const allowed = source.provider.relayedResponseHeaders;
  const headers: Record<string, string> = {};
  // By name, not Object.entries: a pair per header is garbage on every call.
  const given = upstream.headers;
  // Under a limit of the gateway's, its own remaining room replaces the provider's.
  const ownLimits =
    extraHeaders["x-ratelimit-remaining-requests"] !== undefined ||
    extraHeaders["x-ratelimit-remaining-tokens"] !== undefined ||
    extraHeaders["x-promptgate-remaining-chars"] !== undefined;
  for (const name of Object.keys(given)) {
    if (ownLimits && name.startsWith("x-ratelimit-")) continue;
    if (name === "content-type" || isAllowed(name, allowed) || (name === simulatedLabel && source.upstream.simulated)) {
      headers[name] = given[name] as string;
    }
  }
  for (const name of Object.keys(extraHeaders)) headers[name.toLowerCase()] = extraHeaders[name] as string;
  return headers;
}

function isAllowed(name: string, allowed: readonly string[]): boolean {
  for (const entry of allowed) {
    if (entry === name) return true;
    if (entry.endsWith("*") && name.startsWith(entry.slice(0, -1))) return true;
  }
  return false;
}

/** Whether a status is a success. */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * The client's response from the provider's, read whole (a stream goes through `relayStream`).
 * A redirect (or any other status that is neither a success nor an error) is never relayed: a
 * client that followed its `location` would send the prompt and its key to another host, and
 * the gateway never follows one itself. It is an `upstream` failure, recorded without its target.
 */
export async function relayResponse(
  source: RelaySource,
  upstream: UpstreamResponse,
  extraHeaders: Record<string, string>,
): Promise<Response> {
  if (upstream.status < 200 || (upstream.status >= 300 && upstream.status < 400)) {
    // Nothing of the body is wanted; cancelling frees the connection instead of reading an unknown length.
    void upstream
      .stream()
      .cancel()
      .catch(() => undefined);
    throw upstreamFailure("upstream", upstream.status, unrelayedStatusText(upstream.status), []);
  }
  const body = await upstream.bytes();
  return new Response(upstream.status === 204 ? null : body, {
    status: upstream.status,
    headers: relayedHeaders(source, upstream, extraHeaders),
  });
}

function unrelayedStatusText(status: number): string {
  return status >= 300
    ? `The provider answered with a redirect (${status}); it was neither followed nor relayed.`
    : `The provider answered with status ${status}, which is neither a success nor an error.`;
}
