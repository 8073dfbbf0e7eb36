import type { ErrorObject } from "ajv/dist/2020.js";
import { closestName } from "./closest-name.js";
import { PolicyFileError } from "./policy-file-error.js";

/**
 * The one error a policy file is refused with, of all the schema found: an unknown key first (a misspelt
 * `limit_char` also makes `limit_chars` missing, and the unknown key is the one to fix), else the first.
 */
export function schemaError(path: string, errors: readonly ErrorObject[]): PolicyFileError {
  const unknown = errors.find((error) => error.keyword === "additionalProperties");
  if (unknown !== undefined) return unknownKeyError(path, unknown);
  const error = errors[0];
  if (error === undefined) return new PolicyFileError(path, "(root)", "does not match the policy schema");
  const segments = segmentsOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") segments.push(String(params.missingProperty));
  return new PolicyFileError(path, fieldPath(segments), describe(error.keyword, params));
}

/** `policies/x.toml: [window] has an unknown key limit_char (did you mean limit_chars?)`. */
function unknownKeyError(path: string, error: ErrorObject): PolicyFileError {
  const table = segmentsOf(error.instancePath);
  const key = String((error.params as Record<string, unknown>).additionalProperty);
  const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
  const meant = closestName(key, known);
  const hint = meant !== undefined ? `did you mean ${meant}?` : `known keys: ${known.join(", ")}`;
  const reason = `is an unknown key (${hint})`;
  const where = table.length === 0 ? "the top level" : isTablePath(table) ? `[${table.join(".")}]` : fieldPath(table);
  const message = `${path}: ${where} has an unknown key ${tomlKey(key)} (${hint})`;
  return new PolicyFileError(path, fieldPath([...table, key]), reason, message);
}

function segmentsOf(instancePath: string): string[] {
  return instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
}

const bareKey = /^[A-Za-z0-9_-]+$/;

function isTablePath(segments: string[]): boolean {
  return segments.every((segment) => bareKey.test(segment) && !/^\d+$/.test(segment));
}

// A key as it would be written in TOML: bare where it can be, else quoted.
function tomlKey(key: string): string {
  return bareKey.test(key) ? key : JSON.stringify(key);
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
