import type { WritablePolicyRegistry } from "../policy/policy-registry.js";
import type { PolicyVersionStore } from "./store.js";

/**
 * Keeps every policy version the gateway has served: the files' current versions are stored,
 * and the versions stored before come back into the registry, pinnable and for frozen cases.
 */
export async function syncPolicyVersions(store: PolicyVersionStore, policies: WritablePolicyRegistry): Promise<void> {
  for (const version of policies.list()) await store.savePolicyVersion(version);
  for (const version of await store.listPolicyVersions()) policies.add(version);
}
