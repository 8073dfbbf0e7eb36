import type { PromptSize } from "../errors/prompt-size.js";

/**
 * A step of one call, logged at `debug` (`PROMPTGATE_LOG=debug`) for a person finding out why a call
 * went as it did: the route matched, the policy resolved, each check with its sizes, each provider
 * request. Identifiers, outcomes and numbers only: never prompt or answer text, a key, or a query string.
 */
export type DebugLine = RouteStep | PolicyStep | CheckStep | UpstreamStep;

/** The route a request matched, and the policy it asked for. */
export interface RouteStep {
  event: "debug";
  step: "route";
  ref: string;
  surface: string;
  method: string;
  /** The route path below the surface's mount. */
  route: string;
  /** What the route does: a measured kind, `proxy`, or why it is no route. */
  endpoint: "generate" | "count" | "cache" | "proxy" | "not-found" | "method-not-allowed";
  /** The policy reference of the URL (cut to 100 characters), or `(default) <name>`. */
  policy_requested: string;
}

/** The policy version a call runs under, and whether its case chose it. */
export interface PolicyStep {
  event: "debug";
  step: "policy";
  ref: string;
  /** `name@12hex`. */
  policy: string;
  case: string | undefined;
  /** The version the request resolved to before its case was consulted, where the case froze another. */
  requested_version?: string;
}

/** One check's outcome with the sizes it compared. */
export interface CheckStep {
  event: "debug";
  step: "check";
  ref: string;
  check: PromptSize["check"];
  /** `within`; `over_target` (reported only); `over_limit` or `over_media_limit` (refused when `enforced`). */
  outcome: "within" | "over_target" | "over_limit" | "over_media_limit";
  enforced: boolean;
  prompt_size: PromptSize;
}

/** A request to the provider: where (origin and path, never the query), and what came back. */
export interface UpstreamStep {
  event: "debug";
  step: "upstream";
  ref: string;
  method: string;
  /** The upstream URL's origin and path; its query, which may carry a key, is left out. */
  url: string;
  /** The provider's status, when an answer arrived. */
  status: number | undefined;
  /** Why no answer arrived, in redacted form (see `failureReason`). */
  reason: string | undefined;
  /** From sending to the answer's headers (or the failure). */
  duration_ms: number;
}
