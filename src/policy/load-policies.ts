import { Ajv2020 } from "ajv/dist/2020.js";
import { identifyPolicies, type ValidatedPolicy } from "./identify-policy.js";
import type { Policy } from "./policy.js";
import { PolicyFileError } from "./policy-file-error.js";
import type { WritablePolicyRegistry } from "./policy-registry.js";
import { schemaError } from "./policy-schema-error.js";
import { parseTomlFile } from "./toml-file.js";

export { identify } from "./identify-policy.js";
export { PolicyFileError } from "./policy-file-error.js";

/** One policy file as the runtime read it; `path` is used only in messages and `source`. */
export interface PolicyFile {
  path: string;
  text: string;
}

/**
 * Parses, validates and identifies every policy file; the first invalid file throws a
 * `PolicyFileError`. Defaults from `policySchema` are applied before hashing, so the
 * identity reflects the effective policy.
 */
export async function loadPolicies(files: PolicyFile[], policySchema: object): Promise<WritablePolicyRegistry> {
  return identifyPolicies(validatePolicyFiles(files, policySchema));
}

/**
 * The validation half of `loadPolicies`: parses and validates every policy file, defaults applied; the first
 * invalid file throws a `PolicyFileError`. Workers run it at build time, as Ajv cannot compile there.
 */
export function validatePolicyFiles(files: PolicyFile[], policySchema: object): ValidatedPolicy[] {
  // Compiled per load: policies load once at start-up. Every error is collected (and with its schema), so
  // that a misspelt key is reported as unknown rather than as the missing key it was meant to be.
  const ajv = new Ajv2020({ allErrors: true, verbose: true, useDefaults: true, strict: true, allowUnionTypes: true });
  const validate = ajv.compile<Policy>(policySchema);
  const validated: ValidatedPolicy[] = [];
  const fileByName = new Map<string, string>();

  for (const file of files) {
    const policy: unknown = parseTomlFile(file.path, file.text);
    if (!validate(policy)) throw schemaError(file.path, validate.errors ?? []);
    checkSemantics(file.path, policy);
    const firstFile = fileByName.get(policy.name);
    if (firstFile !== undefined) throw new PolicyFileError(file.path, "name", `repeats the name of ${firstFile}`);
    fileByName.set(policy.name, file.path);
    validated.push({ policy, source: file.path });
  }
  return validated;
}

function checkSemantics(path: string, policy: Policy): void {
  const { target_chars, limit_chars, reserve_chars } = policy.window;
  if (target_chars > limit_chars) {
    throw new PolicyFileError(path, "window.target_chars", "must not exceed window.limit_chars");
  }
  if (reserve_chars >= limit_chars) {
    throw new PolicyFileError(path, "window.reserve_chars", "must be less than window.limit_chars");
  }
  const ruleNames = new Set<string>();
  for (const [index, rule] of policy.repair.entries()) {
    if (ruleNames.has(rule.name)) throw new PolicyFileError(path, `repair[${index}].name`, "repeats a rule name");
    ruleNames.add(rule.name);
  }
}
