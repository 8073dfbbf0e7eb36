import type { UpstreamConfig } from "../config.js";
import type { Deps } from "../deps.js";
import type { Surface } from "../surfaces/surface.js";
import { presentedCredentials, type UpstreamCredential } from "./authorize-call.js";
import type { Deadline } from "./deadline.js";

/** How one call reaches its provider: where, with which credential, until when, and what to keep secret. */
export interface UpstreamCall {
  surface: Surface;
  upstream: UpstreamConfig;
  request: Request;
  url: URL;
  credential: UpstreamCredential;
  /** Its signal aborts the provider call when the client goes away or the deadline passes. */
  deadline: Deadline;
  /** What never reaches a record: the configured provider, gateway and admin keys, and the client's credentials. */
  secrets: readonly string[];
}

/** What a call to the provider starts from. */
export interface UpstreamCallStart {
  surface: Surface;
  request: Request;
  url: URL;
  credential: UpstreamCredential;
  deadline: Deadline;
}

/** The provider call of a request: its upstream, its abort signal and its secrets. */
export function openUpstreamCall(deps: Deps, start: UpstreamCallStart): UpstreamCall {
  const { config } = deps;
  const secrets = [
    ...config.gatewayKeys,
    ...Object.values(config.upstreams).flatMap((upstream) =>
      upstream.serverKey === undefined ? [] : [upstream.serverKey],
    ),
    ...(config.adminKey === undefined ? [] : [config.adminKey]),
    ...presentedCredentials(start.surface, start.request.headers, start.url),
  ];
  return {
    ...start,
    upstream: config.upstreams[start.surface.name],
    secrets,
  };
}
