import type { PolicyVersion } from "./policy.js";
import type { WritablePolicyRegistry } from "./policy-registry.js";

/** A registry whose contents a reload replaces whole, while calls keep reading through it. */
export interface ReloadablePolicies extends WritablePolicyRegistry {
  /** The versions plain names resolve to now, one per name. */
  current(): PolicyVersion[];
  /**
   * Makes `registry` the one every later read sees, with `current` its versions for plain names, in one
   * assignment: a read sees the old registry or the new one, never a mix. A call that resolved its version
   * before keeps it.
   */
  replace(registry: WritablePolicyRegistry, current: PolicyVersion[]): void;
}

/**
 * Holds the policy registry the pipeline reads (`deps.policies`) so that a reload can swap it. `list()` keeps
 * the order in which versions first became known across registries, as one registry lists them.
 */
export function reloadablePolicies(initial: WritablePolicyRegistry): ReloadablePolicies {
  let held = { registry: initial, current: initial.list() };
  const firstKnown = new Map<string, number>();
  const orderOf = (version: PolicyVersion): number => {
    let order = firstKnown.get(version.sha256);
    if (order === undefined) {
      order = firstKnown.size;
      firstKnown.set(version.sha256, order);
    }
    return order;
  };
  for (const version of initial.list()) orderOf(version);

  return {
    resolve: (policyRef) => held.registry.resolve(policyRef),
    list() {
      const versions = held.registry.list();
      for (const version of versions) orderOf(version);
      return versions.sort((first, second) => orderOf(first) - orderOf(second));
    },
    add: (version) => held.registry.add(version),
    current: () => [...held.current],
    replace(registry, current) {
      held = { registry, current: [...current] };
    },
  };
}
