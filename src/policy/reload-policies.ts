import { identifyPolicies, type ValidatedPolicy } from "./identify-policy.js";
import { type PolicyFile, validatePolicyFiles } from "./load-policies.js";
import type { PolicyVersion } from "./policy.js";
import { PolicyFileError } from "./policy-file-error.js";
import { createPolicyRegistry, currentPolicyNames, type WritablePolicyRegistry } from "./policy-registry.js";
import type { ReloadablePolicies } from "./reloadable-policies.js";

/** Why a policy folder was refused: the file (or the folder), the field, and the reason. */
export interface PolicyProblem {
  file: string;
  field: string;
  reason: string;
}

/** How a policy name's current version changed; `null` for a name that was not there before, or is no longer. */
export interface PolicyChange {
  name: string;
  from: string | null;
  to: string | null;
}

/**
 * A reload's outcome: the folder's versions took over, with what changed by name; or the folder was refused
 * with every problem found, and the running versions (`policies`) stay.
 */
export type PolicyReload =
  | { reloaded: true; policies: string[]; changes: PolicyChange[] }
  | { reloaded: false; policies: string[]; problems: PolicyProblem[] };

/** What a reload reads, checks and keeps. */
export interface PolicyReloadOptions {
  policies: ReloadablePolicies;
  /** The policy folder, for problems that concern it as a whole. */
  folder: string;
  /** Reads the folder's policy files anew; a `PolicyFileError` is a problem of the reload, anything else a failure. */
  readFiles: () => Promise<PolicyFile[]>;
  policySchema: object;
  /** `PROMPTGATE_DEFAULT_POLICY`: a folder without it is refused. */
  defaultPolicy: string;
  /** Stores the new versions and brings stored earlier ones into the registry (`syncPolicyVersions`). */
  keep: (registry: WritablePolicyRegistry) => Promise<void>;
  /**
   * What is reloaded with the policies (Node: the folder's `keys.toml`), read against the new policy names: a
   * `PolicyFileError` refuses the reload as a policy file's problem does; else `apply` runs as the new set takes over.
   */
  alongside?: (policyNames: readonly string[]) => Promise<() => void>;
}

/**
 * A reload of the policy folder: read and validated whole (every file, every problem), then either switched to
 * in one step, every earlier version kept for pins and frozen cases, or refused with the running set kept. One
 * reload runs at a time; a failure to store the new versions rejects and switches nothing.
 */
export function policyReloader(options: PolicyReloadOptions): () => Promise<PolicyReload> {
  let last: Promise<unknown> = Promise.resolve();
  return () => {
    const next = last.then(
      () => reloadOnce(options),
      () => reloadOnce(options),
    );
    last = next.catch(() => undefined);
    return next;
  };
}

async function reloadOnce(options: PolicyReloadOptions): Promise<PolicyReload> {
  const running = options.policies.current();
  const refused = (problems: PolicyProblem[]): PolicyReload => ({
    reloaded: false,
    policies: running.map((version) => version.ref),
    problems,
  });
  let files: PolicyFile[];
  try {
    files = await options.readFiles();
  } catch (error) {
    if (!PolicyFileError.isInstance(error)) throw error;
    return refused([problemOf(error)]);
  }
  const { validated, problems } = validateEach(files, options.policySchema);
  if (problems.length > 0) return refused(problems);
  const fresh = await identifyPolicies(validated);
  try {
    fresh.resolve(options.defaultPolicy);
  } catch {
    return refused([
      { file: options.folder, field: "name", reason: "no file holds the default policy (PROMPTGATE_DEFAULT_POLICY)" },
    ]);
  }
  const current = fresh.list();
  let apply: (() => void) | undefined;
  try {
    apply = await options.alongside?.(currentPolicyNames(fresh));
  } catch (error) {
    if (!PolicyFileError.isInstance(error)) throw error;
    return refused([problemOf(error)]);
  }
  const next = createPolicyRegistry(current, options.policies.list());
  await options.keep(next);
  options.policies.replace(next, current);
  apply?.();
  return { reloaded: true, policies: current.map((version) => version.ref), changes: changesBetween(running, current) };
}

/** Validates every file on its own, so that one reload reports every invalid file, then the names across files. */
function validateEach(
  files: PolicyFile[],
  policySchema: object,
): { validated: ValidatedPolicy[]; problems: PolicyProblem[] } {
  const validated: ValidatedPolicy[] = [];
  const problems: PolicyProblem[] = [];
  const fileByName = new Map<string, string>();
  for (const file of files) {
    let policies: ValidatedPolicy[];
    try {
      policies = validatePolicyFiles([file], policySchema);
    } catch (error) {
      if (!PolicyFileError.isInstance(error)) throw error;
      problems.push(problemOf(error));
      continue;
    }
    for (const policy of policies) {
      const firstFile = fileByName.get(policy.policy.name);
      if (firstFile !== undefined) {
        problems.push({ file: file.path, field: "name", reason: `repeats the name of ${firstFile}` });
        continue;
      }
      fileByName.set(policy.policy.name, file.path);
      validated.push(policy);
    }
  }
  return { validated, problems };
}

function problemOf(error: PolicyFileError): PolicyProblem {
  return { file: error.file, field: error.field, reason: error.reason };
}

/** The names whose current version differs between two sets, by name. */
function changesBetween(before: PolicyVersion[], after: PolicyVersion[]): PolicyChange[] {
  const refsBefore = new Map(before.map((version) => [version.policy.name, version.ref]));
  const refsAfter = new Map(after.map((version) => [version.policy.name, version.ref]));
  const names = [...new Set([...refsBefore.keys(), ...refsAfter.keys()])].sort();
  return names
    .map((name) => ({ name, from: refsBefore.get(name) ?? null, to: refsAfter.get(name) ?? null }))
    .filter((change) => change.from !== change.to);
}
