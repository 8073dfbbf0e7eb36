import type { Deps } from "../deps.js";
import type { PromptSize } from "../errors/prompt-size.js";
import type { PolicyVersion } from "../policy/policy.js";
import type { RouteStep } from "../record/debug-line.js";
import type { Endpoint, MethodNotAllowed } from "../surfaces/surface.js";
import type { UpstreamRequest } from "../transport/transport.js";
import { withinMediaLimit, withinWindow } from "../window/check.js";
import type { Measurements } from "./prepare-call.js";
import { writeLog } from "./write-log.js";

/**
 * Whether the log takes the steps of a call (`PROMPTGATE_LOG=debug` or `trace`). Checked before a step's
 * line is built, so that a gateway logging at `info` spends nothing on them.
 */
export function debugging(deps: Pick<Deps, "config" | "log">): boolean {
  const level = deps.config.logLevel;
  return deps.log !== undefined && (level === "debug" || level === "trace");
}

/** The route a request matched (or why none), and the policy reference it asked for. */
export function debugRoute(
  deps: Deps,
  request: { ref: string; surface: string; method: string; route: string; policyRef: string | undefined },
  endpoint: Endpoint | MethodNotAllowed | undefined,
): void {
  if (!debugging(deps)) return;
  const kind: RouteStep["endpoint"] = endpoint === undefined ? "not-found" : endpoint.kind;
  writeLog(deps, {
    event: "debug",
    step: "route",
    ref: request.ref,
    surface: request.surface,
    method: request.method,
    route: request.route.slice(0, 300),
    endpoint: kind,
    policy_requested:
      request.policyRef === undefined ? `(default) ${deps.config.defaultPolicy}` : request.policyRef.slice(0, 100),
  });
}

/** The version a call runs under; `requested` differs where its case froze another. */
export function debugPolicy(
  deps: Deps,
  ref: string,
  policy: PolicyVersion,
  caseId: string | undefined,
  requested: PolicyVersion,
): void {
  if (!debugging(deps)) return;
  writeLog(deps, {
    event: "debug",
    step: "policy",
    ref,
    policy: policy.ref,
    case: caseId,
    ...(requested === policy ? {} : { requested_version: requested.ref }),
  });
}

/** Each check that ran, its outcome and its sizes; `kind` says which checks may refuse (see `prepareCall`). */
export function debugChecks(
  deps: Deps,
  ref: string,
  measurements: Measurements,
  policy: PolicyVersion,
  kind: "generate" | "count" | "cache",
): void {
  if (!debugging(deps)) return;
  for (const size of [measurements.preflight, measurements.provider]) {
    if (size === undefined) continue;
    const checked = kind === "generate" || (kind === "cache" && size.check === "provider");
    writeLog(deps, {
      event: "debug",
      step: "check",
      ref,
      check: size.check,
      outcome: outcomeOf(size),
      enforced: checked && policy.policy.window.enforce,
      prompt_size: size,
    });
  }
}

function outcomeOf(size: PromptSize): "within" | "over_target" | "over_limit" | "over_media_limit" {
  if (!withinMediaLimit(size)) return "over_media_limit";
  if (!withinWindow(size)) return "over_limit";
  return size.over_target ? "over_target" : "within";
}

/** A request to the provider: its origin and path (never the query, which may hold a key) and what came back. */
export function debugUpstream(
  deps: Deps,
  ref: string,
  request: UpstreamRequest,
  outcome: { status: number } | { reason: string },
  startedAt: number,
): void {
  if (!debugging(deps)) return;
  const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
  writeLog(deps, {
    event: "debug",
    step: "upstream",
    ref,
    method: request.method,
    url: url === undefined ? "(unparseable)" : `${url.origin}${url.pathname}`,
    status: "status" in outcome ? outcome.status : undefined,
    reason: "reason" in outcome ? outcome.reason : undefined,
    duration_ms: Math.max(0, Math.round(deps.now().getTime() - startedAt)),
  });
}
