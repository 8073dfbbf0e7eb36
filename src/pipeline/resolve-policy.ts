import type { Deps } from "../deps.js";
import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import type { PolicyVersion } from "../policy/policy.js";

const maxCaseIdLength = 256;

/**
 * The policy version a call runs under. Without a case it is the one the URL names (or the
 * default). With `x-promptgate-case`, the first call of the case under a policy name freezes
 * that version for the case, atomically in the store; later calls under the name get the
 * frozen version, and an explicitly pinned other version is a `409 POLICY_MISMATCH`.
 */
export async function resolvePolicy(
  deps: Deps,
  policyRef: string | undefined,
  caseId: string | undefined,
): Promise<PolicyVersion> {
  const requested = deps.policies.resolve(policyRef ?? deps.config.defaultPolicy);
  if (caseId === undefined) return requested;
  if (caseId.length === 0 || caseId.length > maxCaseIdLength) {
    throw invalidRequest(
      `The x-promptgate-case header must hold 1 to ${maxCaseIdLength} characters.`,
      "x-promptgate-case",
    );
  }
  const name = requested.policy.name;
  const frozen = await deps.store.freezeCasePolicy(caseId, name, requested.sha256);
  if (frozen === requested.sha256) return requested;
  if (policyRef?.includes("@")) {
    throw new GatewayError(
      "POLICY_MISMATCH",
      409,
      "This case runs under another version of the policy; the pinned version does not match it.",
    );
  }
  return await frozenVersion(deps, `${name}@${frozen}`);
}

/**
 * The version a case is frozen on. Another gateway on the same store may have frozen one
 * this process has not loaded yet, so an unknown one is looked up in the store once more.
 */
async function frozenVersion(deps: Deps, pinned: string): Promise<PolicyVersion> {
  try {
    return deps.policies.resolve(pinned);
  } catch {
    for (const version of await deps.store.listPolicyVersions()) deps.policies.add(version);
    return deps.policies.resolve(pinned);
  }
}
