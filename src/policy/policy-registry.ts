import { GatewayError } from "../errors/gateway-error.js";
import type { PolicyVersion } from "./policy.js";

/** Finds the policy version a request names; runs once per request. */
export interface PolicyRegistry {
  /** A name (its current version) or `name@<12 to 64 hex digits>` (a pinned version); else `POLICY_NOT_FOUND`. */
  resolve(policyRef: string): PolicyVersion;
  /** Every known version, current and earlier, in the order they became known. */
  list(): PolicyVersion[];
}

/** A registry that also takes versions served before, e.g. from the state store. */
export interface WritablePolicyRegistry extends PolicyRegistry {
  /** Adds an earlier version: it resolves when pinned, never for a plain name. Known versions are ignored. */
  add(version: PolicyVersion): void;
}

const pinnedRef = /^([^@]+)@([0-9a-f]{12,64})$/i;

/** The names of a registry's current policies: those a plain name resolves (an earlier version's only while current). */
export function currentPolicyNames(policies: PolicyRegistry): string[] {
  const names = new Set(policies.list().map((version) => version.policy.name));
  return [...names].filter((name) => {
    try {
      policies.resolve(name);
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether a policy reference pins a version (`name@<12 to 64 hex digits>`) rather than naming a policy. */
export function isPinnedRef(policyRef: string): boolean {
  return pinnedRef.test(policyRef);
}

/** A registry whose plain names resolve to `current` (one per name); `earlier` versions resolve only when pinned. */
export function createPolicyRegistry(current: PolicyVersion[], earlier: PolicyVersion[] = []): WritablePolicyRegistry {
  const currentByName = new Map<string, PolicyVersion>();
  const versionsByName = new Map<string, PolicyVersion[]>();
  const all: PolicyVersion[] = [];

  function remember(version: PolicyVersion): boolean {
    const versions = versionsByName.get(version.policy.name) ?? [];
    if (versions.some((known) => known.sha256 === version.sha256)) return false;
    versions.push(version);
    versionsByName.set(version.policy.name, versions);
    all.push(version);
    return true;
  }

  for (const version of current) {
    if (currentByName.has(version.policy.name)) {
      throw new Error(`Two current versions of one policy name, the second from ${version.source}.`);
    }
    currentByName.set(version.policy.name, version);
    remember(version);
  }
  for (const version of earlier) remember(version);

  return {
    resolve(policyRef) {
      const byName = currentByName.get(policyRef);
      if (byName !== undefined) return byName;
      const pinned = pinnedRef.exec(policyRef);
      if (pinned === null) throw policyNotFound([...currentByName.keys()]);
      const prefix = pinned[2]!.toLowerCase();
      const matches = (versionsByName.get(pinned[1]!) ?? []).filter((version) => version.sha256.startsWith(prefix));
      if (matches.length !== 1) throw policyNotFound([...currentByName.keys()]);
      return matches[0]!;
    },
    list() {
      return [...all];
    },
    add(version) {
      remember(version);
    },
  };
}

/**
 * The ref is request input, so the message never repeats it (STYLE.md, principle 5); it lists the names
 * the operator's policy files give, which a client may use, and nothing of their content.
 */
function policyNotFound(names: readonly string[]): GatewayError {
  const known = names.length === 0 ? "none" : listedNames(names);
  return new GatewayError(
    "POLICY_NOT_FOUND",
    404,
    `No known policy version matches the requested policy reference. Known policies: ${known}.`,
  );
}

/** Names, sorted and comma-separated, at most 20 of them and how many more. */
export function listedNames(names: readonly string[]): string {
  const sorted = [...new Set(names)].sort();
  const first = sorted.slice(0, 20).join(", ");
  return sorted.length > 20 ? `${first} and ${sorted.length - 20} more` : first;
}
