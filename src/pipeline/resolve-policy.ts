import type { Deps } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PolicyVersion } from "../policy/policy.js";
import { isPinnedRef } from "../policy/policy-registry.js";

/**
 * The version the URL names, or the default policy's current one. A pinned version this process
 * does not know may have been stored since it started, by another gateway on the same store (or a
 * restart of this one with a changed file), so it is looked up in the store once more.
 */
export async function requestedPolicy(deps: Deps, policyRef: string | undefined): Promise<PolicyVersion> {
  const ref = policyRef ?? deps.config.defaultPolicy;
  try {
    return deps.policies.resolve(ref);
  } catch (error) {
    if (!GatewayError.isInstance(error) || error.code !== "POLICY_NOT_FOUND" || !isPinnedRef(ref)) throw error;
    for (const version of await deps.store.listPolicyVersions()) deps.policies.add(version);
    return deps.policies.resolve(ref);
  }
}

/**
 * The version a call runs under. Without a case it is the requested one. With a case (its
 * `x-promptgate-case`), the first call of the case under a policy name freezes that version for the
 * case, atomically in the store; later calls under the name get the frozen version, and an
 * explicitly pinned other version is a `409 POLICY_MISMATCH`.
 */
export async function casePolicy(
  deps: Deps,
  requested: PolicyVersion,
  policyRef: string | undefined,
  caseId: string | undefined,
): Promise<PolicyVersion> {
  if (caseId === undefined) return requested;
  const name = requested.policy.name;
  const frozen = await deps.store.freezeCasePolicy(caseId, name, requested.sha256);
  if (frozen === requested.sha256) return requested;
  if (policyRef !== undefined && isPinnedRef(policyRef)) {
    throw new GatewayError(
      "POLICY_MISMATCH",
      409,
      "This case runs under another version of the policy; the pinned version does not match it.",
    );
  }
  // Another gateway on the same store may have frozen a version this process has not loaded yet.
  return await requestedPolicy(deps, `${name}@${frozen}`);
}
