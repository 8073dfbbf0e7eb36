import { canonicalJson } from "../json/canonical-json.js";
import { sha256Hex } from "../json/sha256-hex.js";
import type { Policy, PolicyVersion } from "./policy.js";
import { createPolicyRegistry, type WritablePolicyRegistry } from "./policy-registry.js";

/** A policy that has passed validation (defaults applied), and where it came from. */
export interface ValidatedPolicy {
  policy: Policy;
  /** The file it was read from, for messages. */
  source: string;
}

/** The version of a validated policy: sha256 of its canonical JSON, and `name@` + 12 hex digits. */
export async function identify(policy: Policy, source: string): Promise<PolicyVersion> {
  const sha256 = await sha256Hex(canonicalJson(policy));
  return { policy, sha256, ref: `${policy.name}@${sha256.slice(0, 12)}`, source };
}

/**
 * The registry of policies validated before (at start-up, or at build time for Workers), each frozen and
 * identified; this step needs no JSON Schema validator.
 */
export async function identifyPolicies(policies: readonly ValidatedPolicy[]): Promise<WritablePolicyRegistry> {
  const versions: PolicyVersion[] = [];
  for (const { policy, source } of policies) versions.push(await identify(deepFreeze(policy), source));
  return createPolicyRegistry(versions);
}

// Versions are shared by every request; freezing keeps one request from changing the
// policy, and with it the meaning of its identity, for the next.
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
