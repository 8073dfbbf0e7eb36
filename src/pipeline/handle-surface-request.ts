import type { Deps } from "../deps.js";
import { CallFlow } from "./call-flow.js";
import type { SurfaceRequest } from "./surface-request.js";

/**
 * Runs one call: key, route, policy, body, measurement, both checks, the provider call, the
 * answer's validation, the record and the log line; every failure becomes the surface's native
 * error, and a client that went away cancels the provider call. A request without a valid
 * gateway key is refused before anything about it is kept.
 */
export function handleSurfaceRequest(deps: Deps, input: SurfaceRequest): Promise<Response> {
  return new CallFlow(deps, input).run();
}
