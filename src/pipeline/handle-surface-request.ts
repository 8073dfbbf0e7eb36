import type { Deps } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import { parseJsonObject, readCappedBody } from "../http/read-body.js";
import type { Surface } from "../surfaces/surface.js";
import { enforceWindow } from "../window/check.js";
import { measure } from "../window/prompt-size.js";
import { relayResponse } from "./relay-response.js";
import { sendUpstream } from "./send-upstream.js";
import { upstreamRequest } from "./upstream-request.js";

/** One request on a surface, from the route to the client's response. */
export interface SurfaceRequest {
  surface: Surface;
  request: Request;
  /** The route path below the surface's mount, e.g. `/chat/completions`. */
  path: string;
  /** The policy named in the URL, or undefined for the default. */
  policyRef: string | undefined;
  ref: string;
}

/**
 * Runs one call: route, policy, body, measurement, both checks, the provider call, and the
 * answer; every failure becomes the surface's native error.
 */
export async function handleSurfaceRequest(deps: Deps, input: SurfaceRequest): Promise<Response> {
  const { surface, request, path, ref } = input;
  const headers: Record<string, string> = { "x-promptgate-ref": ref };
  try {
    const endpoint = surface.match(request.method, path);
    if (endpoint === undefined) throw new GatewayError("NOT_FOUND", 404, "There is no such route on this surface.");
    if (endpoint === "method-not-allowed") {
      throw new GatewayError("METHOD_NOT_ALLOWED", 405, "This route does not take this HTTP method.");
    }
    const policy = deps.policies.resolve(input.policyRef ?? deps.config.defaultPolicy);
    const url = new URL(request.url);
    const upstream = deps.config.upstreams[surface.name];
    if (endpoint.kind === "proxy") {
      const response = await sendUpstream(deps, upstreamRequest(surface, upstream, request, url, path, undefined));
      return await relayResponse(response, false, headers);
    }
    const body = await readCappedBody(request, deps.config.maxBodyBytes);
    const call = endpoint.parse(parseJsonObject(body), path);
    const preflight = measure(call, { check: "preflight", policy, cachePrefixChars: 0 });
    headers["x-promptgate-prompt-size"] = JSON.stringify(preflight);
    if (endpoint.kind === "generate") {
      enforceWindow(preflight, policy);
      // The body goes upstream unchanged, so the provider representation is this same call.
      enforceWindow(measure(call, { check: "provider", policy, cachePrefixChars: 0 }), policy);
    }
    const response = await sendUpstream(deps, upstreamRequest(surface, upstream, request, url, path, body));
    return await relayResponse(response, call.stream, headers);
  } catch (caught) {
    const error = GatewayError.isInstance(caught)
      ? caught
      : new GatewayError("internal", 500, "The gateway failed to handle this request.");
    const rendered = surface.renderError(error, ref);
    return new Response(JSON.stringify(rendered.body), {
      status: rendered.status,
      headers: { ...rendered.headers, ...headers },
    });
  }
}
