import type { Deps, UpstreamRequest, UpstreamResponse } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";

/** Sends a request upstream; a failure without an HTTP answer becomes a retryable `upstream` error. */
export async function sendUpstream(deps: Deps, request: UpstreamRequest): Promise<UpstreamResponse> {
  try {
    return await deps.transport(request);
  } catch {
    throw new GatewayError("upstream", 502, "The provider could not be reached.");
  }
}
