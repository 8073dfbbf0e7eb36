import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { parse, TomlError } from "smol-toml";
import { identifyPolicies, type ValidatedPolicy } from "./identify-policy.js";
import type { Policy } from "./policy.js";
import type { WritablePolicyRegistry } from "./policy-registry.js";

export { identify } from "./identify-policy.js";

/** One policy file as the runtime read it; `path` is used only in messages and `source`. */
export interface PolicyFile {
  path: string;
  text: string;
}

/** A policy file the gateway refuses to start with: which file, which field, and why. */
export class PolicyFileError extends Error {
  override readonly name = "PolicyFileError";

  constructor(
    readonly file: string,
    /** A dotted path such as `window.limit_chars`, or `(root)` for the whole file. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${file}: ${field}: ${reason}`);
  }

  static isInstance(value: unknown): value is PolicyFileError {
    return value instanceof PolicyFileError;
  }
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
  // Compiled per load: policies load once at start-up.
  const ajv = new Ajv2020({ allErrors: false, useDefaults: true, strict: true, allowUnionTypes: true });
  const validate = ajv.compile<Policy>(policySchema);
  const validated: ValidatedPolicy[] = [];
  const fileByName = new Map<string, string>();

  for (const file of files) {
    const policy: unknown = parseToml(file);
    if (!validate(policy)) throw schemaError(file.path, validate.errors?.[0]);
    checkSemantics(file.path, policy);
    const firstFile = fileByName.get(policy.name);
    if (firstFile !== undefined) throw new PolicyFileError(file.path, "name", `repeats the name of ${firstFile}`);
    fileByName.set(policy.name, file.path);
    validated.push({ policy, source: file.path });
  }
  return validated;
}

function parseToml(file: PolicyFile): unknown {
  try {
    return parse(file.text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    // smol-toml's message is "Invalid TOML document: <reason>" followed by a code excerpt;
    // only the reason is kept.
    const reason = error.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
    throw new PolicyFileError(
      file.path,
      "(root)",
      `TOML syntax error at line ${error.line}, column ${error.column}: ${reason}`,
    );
  }
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

function schemaError(path: string, error: ErrorObject | undefined): PolicyFileError {
  if (error === undefined) return new PolicyFileError(path, "(root)", "does not match the policy schema");
  const segments = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") segments.push(String(params.missingProperty));
  if (error.keyword === "additionalProperties") segments.push(String(params.additionalProperty));
  return new PolicyFileError(path, fieldPath(segments), describe(error.keyword, params));
}

function fieldPath(segments: string[]): string {
  let path = "";
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) path += path === "" ? segment : `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path === "" ? "(root)" : path;
}

// In the file's own vocabulary: a JSON object is a TOML table.
const typeNames: Record<string, string> = {
  integer: "an integer",
  number: "a number",
  string: "a string",
  boolean: "a boolean",
  object: "a table",
  array: "an array",
};

// Phrased from the schema's side (keyword and limits) only: the offending value never
// appears, as the file may hold text its author would not want in logs.
function describe(keyword: string, params: Record<string, unknown>): string {
  switch (keyword) {
    case "type":
      return `must be ${listOf([params.type].flat().map((type) => typeNames[String(type)] ?? String(type)))}`;
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not a known field";
    case "enum":
      return `must be one of ${listOf((params.allowedValues as unknown[]).map((value) => JSON.stringify(value)))}`;
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "pattern":
      return `must match the pattern ${String(params.pattern)}`;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `must be ${String(params.comparison)} ${String(params.limit)}`;
    case "minLength":
      return `must be at least ${String(params.limit)} characters long`;
    case "maxLength":
      return `must be at most ${String(params.limit)} characters long`;
    case "minItems":
      return `must have at least ${String(params.limit)} items`;
    case "maxItems":
      return `must have at most ${String(params.limit)} items`;
    default:
      return `does not satisfy the schema keyword "${keyword}"`;
  }
}

function listOf(words: string[]): string {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}
