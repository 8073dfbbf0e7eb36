import type { PolicyReload } from "../policy/reload-policies.js";

/**
 * The answer of `POST /promptgate/admin/policies/reload`: 200 with the versions now current and what changed by
 * name, or 422 `POLICY_RELOAD_REFUSED` with every problem (file, field, reason) and the versions that stay.
 */
export function policyReloadResponse(outcome: PolicyReload, ref: string): Response {
  if (outcome.reloaded) return adminJson({ policies: outcome.policies, changes: outcome.changes }, 200, ref);
  return adminRefusal(
    422,
    "POLICY_RELOAD_REFUSED",
    "The policy folder is not valid; the running policies are kept.",
    ref,
    {
      problems: outcome.problems,
      policies: outcome.policies,
    },
  );
}

/** Workers bundle their policies at build time, so there is nothing to re-read there. */
export function policyReloadUnavailable(ref: string): Response {
  return adminRefusal(
    501,
    "POLICY_RELOAD_UNAVAILABLE",
    "Policies are bundled into this deployment when it is built: a policy change is a new deploy.",
    ref,
  );
}

/** The reload failed before switching (its log line says why). */
export function policyReloadFailed(ref: string): Response {
  return adminRefusal(
    500,
    "POLICY_RELOAD_FAILED",
    "The reload failed before switching, see the gateway's log; the running policies are kept.",
    ref,
  );
}

function adminJson(body: unknown, status: number, ref: string): Response {
  return Response.json(body, { status, headers: { "x-promptgate-ref": ref } });
}

/**
 * An admin refusal in the gateway's plain error shape (render-plain-error.ts). Its codes belong to the admin
 * routes, not to the calls' taxonomy, so it is rendered here; nothing in it comes from the request.
 */
function adminRefusal(status: number, code: string, message: string, ref: string, extra: object = {}): Response {
  const body = { error: { code, message, ...extra, promptgate: { code, ref, retryable: false } } };
  return Response.json(body, { status, headers: { "x-promptgate-ref": ref, "x-should-retry": "false" } });
}
