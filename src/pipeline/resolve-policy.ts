import type { DepsOf } from "../deps.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { PolicyVersion } from "../policy/policy.js";
import { isPinnedRef } from "../policy/policy-registry.js";
import type { CaseFreezeStore, PolicyVersionStore } from "../store/store.js";

/** What resolving a call's policy uses of the gateway: the store's policy versions and case freezes. */
type PolicyDeps = DepsOf<PolicyVersionStore & CaseFreezeStore>;

/**
 * The version the URL names, or the default policy's current one. A pinned version this process
 * does not know may have been stored since it started, by another gateway on the same store (or a
 * restart of this one with a changed file), so it is looked up in the store once more.
 */
export async function requestedPolicy(deps: PolicyDeps, policyRef: string | undefined): Promise<PolicyVersion> {
  const ref = policyRef ?? deps.config.defaultPolicy;
  try {
    return deps.policies.resolve(ref);
  } catch (error) {
    if (!GatewayError.isInstance(error) || error.code !== "POLICY_NOT_FOUND" || !isPinnedRef(ref)) throw error;
    for (const version of await deps.store.listPolicyVersions()) deps.policies.add(version);
    return deps.policies.resolve(ref);
  }
}

/** The version a call runs under, and its case's invalid answers under that policy name (0 without a case). */
export interface CasePolicy {
  policy: PolicyVersion;
  invalidAnswers: number;
}

/**
 * The version a call runs under. Without a case it is the requested one. With a case (its
 * `x-promptgate-case`), the first call of the case under a policy name freezes that version for the
 * case, atomically in the store; later calls under the name get the frozen version, and an
 * explicitly pinned other version is a `409 POLICY_MISMATCH`.
 */
export async function casePolicy(
  deps: PolicyDeps,
  requested: PolicyVersion,
  policyRef: string | undefined,
  caseId: string | undefined,
): Promise<CasePolicy> {
  if (caseId === undefined) return { policy: requested, invalidAnswers: 0 };
  const name = requested.policy.name;
  const frozen = await deps.store.freezeCasePolicy(caseId, name, requested.sha256);
  const { invalidAnswers } = frozen;
  if (frozen.sha256 === requested.sha256) return { policy: requested, invalidAnswers };
  if (policyRef !== undefined && isPinnedRef(policyRef)) {
    throw new GatewayError(
      "POLICY_MISMATCH",
      409,
      "This case runs under another version of the policy; the pinned version does not match it.",
    );
  }
  // Another gateway on the same store may have frozen a version this process has not loaded yet.
  return { policy: await requestedPolicy(deps, `${name}@${frozen.sha256}`), invalidAnswers };
}

/**
 * Refuses a call of a case that has had as many invalid answers under its policy as the policy's
 * `[validation] max_invalid_per_case` allows: 400 INVALID_ANSWER_LIMIT (not retryable) until an admin resets the count.
 */
export function checkInvalidAnswerCap(policy: PolicyVersion, invalidAnswers: number): void {
  const cap = policy.policy.validation.max_invalid_per_case;
  if (cap === undefined || invalidAnswers < cap) return;
  throw new GatewayError(
    "INVALID_ANSWER_LIMIT",
    400,
    `This case has had ${invalidAnswers} answers that failed the response schema under policy ${policy.policy.name}, ` +
      `its cap (validation.max_invalid_per_case = ${cap}); its calls are refused until an operator resets the count ` +
      "(DELETE /promptgate/admin/cases/{case}/invalid-answers). Nothing was sent.",
  );
}
