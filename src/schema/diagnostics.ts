import { maxNestingDepth, nestsDeeperThan } from "../http/read-body.js";
import { canonicalJson } from "../json/canonical-json.js";
import type { CompiledValidator } from "./compiled-validator.js";
import { exampleObject } from "./diagnose-example.js";
import { hintFor, hintLabel } from "./diagnose-hint.js";
import { knownFields, locate } from "./diagnose-path.js";
import { withoutUnevaluatedEchoes } from "./diagnose-unevaluated.js";
import { type Issue, issuesOf } from "./diagnose-unions.js";
import { escapePointerToken, pointerTokens } from "./json-pointer.js";
import { jsonTypeOf } from "./schema-nodes.js";
import { cutShort, maxCollectedErrors, maxReadErrors, ValidationBudgetExhausted } from "./validation-budget.js";
import type { ValidatorError } from "./validator-error.js";

/** One sanitized failure of an answer (contract section 6): schema text and positions only, never answer values. */
export interface ValidationError {
  /** JSON Pointer into the answer; property names the schema does not know there are masked as `*`. */
  validation_path: string;
  /** The JSON Schema keyword that failed ("type", "required", "enum", …), or "json" for unparseable output. */
  validation_keyword: string;
  /** The property names the schema declares for the object at that path, sorted. */
  validation_fields?: string[];
  /** For a type error: the types the schema allows there (the seven JSON types only). */
  expected_types?: string[];
  /** For a type error: the JSON type found ("integer" for 3, "number" for 3.5, never "integer" for a boolean). */
  actual_type?: string;
  /** For a provider's refusal of the schema: the JSON Schema keyword it refused, where it names one. */
  refused_keyword?: string;
  /** One short English sentence on what to fix. */
  hint: string;
  /** Where an object was expected: an illustrative object made from the schema alone. */
  example?: unknown;
}

/** The outcome of validating one answer against its full schema. */
export interface Validation {
  valid: boolean;
  errors: ValidationError[];
}

/** At most this many errors are reported, the first ones by path. */
const maxErrors = 20;

/** At most this many issues are described (each needs a walk of the schema); the rest would be cut anyway. */
const maxDescribed = 200;

/**
 * An answer nested deeper than a request may be is not walked: the validator and the diagnostics recurse
 * once per level, and a model can nest an answer deeper than any stack.
 */
export const maxAnswerDepth = maxNestingDepth;

/** The outcome of an answer nested deeper than `levels`, which a validator checks no further. */
function tooDeep(levels: number): Validation {
  return {
    valid: false,
    errors: [
      {
        validation_path: "",
        validation_keyword: "nesting",
        hint: `The answer nests objects and arrays too deeply (over ${levels} levels) to be checked against the schema.`,
      },
    ],
  };
}

/** The first error of an answer whose validation ran out of its work budget, or whose errors were too many. */
const cutShortError: ValidationError = {
  validation_path: "",
  validation_keyword: "budget",
  hint: "The answer was not checked in full within the work one validation may take; the detail was cut short.",
};

/**
 * Parses an answer and validates it with the validator of its full schema (see `SchemaValidators.validatorFor`, which
 * refuses a schema the gateway cannot take before any answer is validated).
 */
export function validateAnswer(validator: CompiledValidator, answerText: string): Validation {
  if (nestsDeeperThan(answerText, maxAnswerDepth)) return tooDeep(maxAnswerDepth);
  let answer: unknown;
  try {
    answer = JSON.parse(answerText);
  } catch {
    return {
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "json", hint: "The answer is not valid JSON." }],
    };
  }
  return validateParsedAnswer(validator, answer);
}

/** Validates an already parsed answer (e.g. one that a repair rule rewrote) with the validator of its full schema. */
export function validateParsedAnswer(validator: CompiledValidator, answer: unknown): Validation {
  // A validator that reaches less deep than an answer may nest says so before it runs: the same answer gets the
  // same outcome however much stack the engine happens to give that run.
  if (validator.maxDepth !== undefined && valueNestsDeeperThan(answer, validator.maxDepth)) {
    return tooDeep(validator.maxDepth);
  }
  try {
    return validateWithin(validator, answer);
  } catch (error) {
    // A stack exhausted by recursion (a deep answer, a schema that recurses without end) is an outcome, not a 500.
    if (error instanceof RangeError) return tooDeep(validator.maxDepth ?? maxAnswerDepth);
    // So is a validation that would take longer than any answer should (see validation-budget.ts).
    if (ValidationBudgetExhausted.isInstance(error)) return { valid: false, errors: [cutShortError] };
    throw error;
  }
}

/** Whether a parsed value nests objects and arrays deeper than `limit` levels; walked without recursion. */
function valueNestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== "object" || node === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

function validateWithin(compiled: CompiledValidator, answer: unknown): Validation {
  const reported = compiled.validate(answer);
  if (reported.length === 0) return { valid: true, errors: [] };
  const { failures, complete } = collected(reported);
  // In document order, and at one place in schema order: validators report in orders of their own.
  const issues = mergeRequired(
    issuesOf(withoutUnevaluatedEchoes(failures, compiled.schema, answer), compiled.schema, answer).sort(
      (a, b) => comparePaths(a.instancePath, b.instancePath) || compareText(a.schemaPath, b.schemaPath),
    ),
  ).slice(0, maxDescribed);
  const described = new Map<string, ValidationError>();
  for (const issue of issues) {
    const error = describe(issue, compiled.schema, answer);
    described.set(canonicalJson(error), error);
  }
  const errors = [...described.values()]
    .sort((a, b) => comparePaths(a.validation_path, b.validation_path))
    .slice(0, complete ? maxErrors : maxErrors - 1);
  if (!complete) errors.unshift(cutShortError);
  if (errors.length === 0) {
    errors.push({ validation_path: "", validation_keyword: "schema", hint: "The answer does not match the schema." });
  }
  return { valid: false, errors };
}

/**
 * A validator's errors, each once, at most `maxCollectedErrors` of them, and whether that is all of them. A union
 * the answer fails in every alternative, reached by many paths through other unions, is reported once per path.
 */
function collected(reported: readonly ValidatorError[]): { failures: ValidatorError[]; complete: boolean } {
  const failures = new Map<string, ValidatorError>();
  let complete = reported.length <= maxReadErrors;
  for (const error of reported.slice(0, maxReadErrors)) {
    if (error === cutShort) {
      complete = false;
      continue;
    }
    const key = `${error.instancePath}\u0000${error.schemaPath}\u0000${error.keyword}\u0000${error.propertyName ?? ""}\u0000${JSON.stringify(error.params)}`;
    if (failures.has(key)) continue;
    if (failures.size === maxCollectedErrors) {
      complete = false;
      break;
    }
    failures.set(key, error);
  }
  return { failures: [...failures.values()], complete };
}

function describe(issue: Issue, root: unknown, answer: unknown): ValidationError {
  const located = locate(root, answer, pointerTokens(issue.instancePath) ?? []);
  const segments = issue.unknownProperty === true ? [...located.segments, "*"] : located.segments;
  const fields = knownFields(located.all);
  const typeError = issue.keyword === "type";
  const expectedTypes = [...(issue.expectedTypes ?? [])];
  const objectExpected = issue.keyword === "required" || (typeError && expectedTypes.includes("object"));
  const example = objectExpected ? exampleObject(located.primary, root) : {};
  // Built in the contract's member order, with optional members only where they apply.
  return {
    validation_path: toPointer(segments),
    validation_keyword: issue.keyword,
    ...(fields.length > 0 && (isObject(located.instance) || objectExpected) && { validation_fields: fields }),
    ...(typeError && { expected_types: expectedTypes }),
    ...(typeError && located.instance !== undefined && { actual_type: jsonTypeOf(located.instance) }),
    hint: hintFor(issue, hintLabel(located.segments), located.primary, root),
    ...(Object.keys(example).length > 0 && { example }),
  };
}

/** One `required` issue per object, naming every missing property. */
function mergeRequired(issues: readonly Issue[]): Issue[] {
  const merged: Issue[] = [];
  const byObject = new Map<string, number>();
  for (const issue of issues) {
    const index = issue.keyword === "required" ? byObject.get(issue.instancePath) : undefined;
    const previous = index === undefined ? undefined : merged[index];
    if (index !== undefined && previous !== undefined) {
      const missing = [...new Set([...(previous.missing ?? []), ...(issue.missing ?? [])])];
      merged[index] = { ...previous, missing };
      continue;
    }
    if (issue.keyword === "required") byObject.set(issue.instancePath, merged.length);
    merged.push(issue);
  }
  return merged;
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toPointer(segments: readonly string[]): string {
  return segments.map((segment) => `/${escapePointerToken(segment)}`).join("");
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Document order of JSON Pointers: segment by segment, array indices numerically. */
function comparePaths(a: string, b: string): number {
  const left = pointerTokens(a) ?? [];
  const right = pointerTokens(b) ?? [];
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const x = left[index] ?? "";
    const y = right[index] ?? "";
    if (x === y) continue;
    if (/^\d+$/.test(x) && /^\d+$/.test(y)) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return left.length - right.length;
}
