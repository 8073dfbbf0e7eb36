import { declaredPropertyNames, objectFieldOrder } from "./diagnose-example.js";
import { applicableNodes } from "./diagnose-path.js";
import type { Issue } from "./diagnose-unions.js";
import { declaredTypes, type SchemaNode } from "./schema-nodes.js";

/** Lists longer than this (or with a long entry) are summarised by their count instead. */
const maxListed = 10;
const maxListedLength = 40;
const maxPatternLength = 60;

const typeNames: Record<string, string> = {
  object: "an object",
  array: "an array",
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  null: "null",
};

/** The place a hint names: the last two segments of the masked path, never starting at an array index. */
export function hintLabel(segments: readonly string[]): string {
  if (segments.length === 0) return "The answer";
  let start = Math.max(0, segments.length - 2);
  while (start > 0 && /^\d+$/.test(segments[start] ?? "")) start -= 1;
  const label = segments.slice(start).join("/");
  return start === 0 && /^\d+$/.test(segments[0] ?? "") ? `item ${label}` : label;
}

/**
 * One short English sentence about an issue, built from the masked path and schema text only
 * (names, types, limits, allowed values): never from the answer's values.
 */
export function hintFor(issue: Issue, label: string, nodes: readonly SchemaNode[], root: unknown): string {
  const limit = issue.limit;
  switch (issue.keyword) {
    case "type":
      return `${label} must be ${typePhrase(issue.expectedTypes ?? [], nodes, root)}.`;
    case "required":
    case "dependentRequired":
    case "dependencies": {
      const missing = issue.missing ?? [];
      const noun = missing.length === 1 ? "property" : "properties";
      return `${label} is missing the required ${noun} ${listed(missing) ?? "the schema asks for"}.`;
    }
    case "additionalProperties":
    case "unevaluatedProperties": {
      const allowed = listed(declaredPropertyNames(nodes));
      return `${label} has a property the schema does not allow${allowed === undefined ? "" : `; allowed: ${allowed}`}.`;
    }
    case "propertyNames":
      return `${label} has a property name the schema does not allow.`;
    case "enum": {
      const allowed = listed(issue.allowed ?? []);
      return allowed === undefined
        ? `${label} must be one of the ${issue.allowed?.length ?? 0} values the schema allows.`
        : `${label} must be one of: ${allowed}.`;
    }
    case "const": {
      const text = JSON.stringify(issue.allowed?.[0]) ?? "";
      return issue.allowed?.length === 1 && text.length <= maxListedLength
        ? `${label} must be ${text}.`
        : `${label} must be the value the schema fixes.`;
    }
    case "pattern":
      return typeof limit === "string" && limit.length <= maxPatternLength
        ? `${label} must match the pattern ${limit}.`
        : `${label} must match the pattern the schema gives.`;
    case "format":
      return `${label} must be a valid ${typeof limit === "string" ? limit : "value of its format"}.`;
    case "oneOf":
      return issue.ambiguous === true
        ? `${label} matches more than one of the allowed alternatives; it must match exactly one.`
        : `${label} must match one of the allowed alternatives.`;
    case "anyOf":
      return `${label} must match one of the allowed alternatives.`;
    case "false_schema":
      return `${label} is not allowed here.`;
    default:
      return limitHint(issue.keyword, label, typeof limit === "number" ? limit : undefined);
  }
}

function limitHint(keyword: string, label: string, limit: number | undefined): string {
  const phrases: Record<string, string> = {
    minLength: `must be at least ${counted(limit, "character")} long`,
    maxLength: `must be at most ${counted(limit, "character")} long`,
    minimum: `must be at least ${limit}`,
    maximum: `must be at most ${limit}`,
    exclusiveMinimum: `must be greater than ${limit}`,
    exclusiveMaximum: `must be less than ${limit}`,
    multipleOf: `must be a multiple of ${limit}`,
    minItems: `must have at least ${counted(limit, "item")}`,
    maxItems: `must have at most ${counted(limit, "item")}`,
    minProperties: `must have at least ${counted(limit, "property", "properties")}`,
    maxProperties: `must have at most ${counted(limit, "property", "properties")}`,
    contains: `must contain at least ${counted(limit, "matching item")}`,
  };
  const fixed: Record<string, string> = {
    uniqueItems: "must not contain duplicate items",
    not: "must not take the form the schema excludes",
    if: "does not meet the schema's conditional requirements",
    additionalItems: "has more items than the schema allows",
    unevaluatedItems: "has more items than the schema allows",
    discriminator: "must name one of the allowed alternatives",
  };
  const phrase = (limit === undefined ? undefined : phrases[keyword]) ?? fixed[keyword];
  return phrase === undefined ? `${label} does not meet the schema's ${keyword} rule.` : `${label} ${phrase}.`;
}

function counted(count: number | undefined, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}

function typePhrase(expected: readonly string[], nodes: readonly SchemaNode[], root: unknown): string {
  if (expected.length === 1 && expected[0] === "object") {
    const fields = objectFieldOrder(nodes);
    const shown = fields.length > 8 ? [...fields.slice(0, 8), "…"] : fields;
    return shown.length === 0 ? "an object" : `an object with ${shown.join(", ")}`;
  }
  if (expected.length === 1 && expected[0] === "array") {
    const items = nodes.flatMap((node) => applicableNodes(node.items, undefined, root, "primary"));
    const itemType = items.flatMap(declaredTypes)[0];
    return itemType === undefined ? "an array" : `an array of ${plural(itemType)}`;
  }
  const names = expected.map((type) => typeNames[type] ?? type);
  const last = names.pop();
  if (last === undefined) return "of another type";
  return names.length === 0 ? last : `${names.join(", ")} or ${last}`;
}

function plural(type: string): string {
  return type === "null" ? "nulls" : type === "array" ? "arrays" : `${type}s`;
}

/** Schema values as a short list, or undefined when they would not make a short sentence. */
function listed(values: readonly unknown[]): string | undefined {
  if (values.length === 0 || values.length > maxListed) return undefined;
  const texts = values.map((value) => (isBare(value) ? value : (JSON.stringify(value) ?? "")));
  return texts.every((text) => text.length <= maxListedLength && !/[\r\n]/.test(text)) ? texts.join(", ") : undefined;
}

/** A string that reads unambiguously without quotes in a comma-separated list. */
function isBare(value: unknown): value is string {
  return typeof value === "string" && value !== "" && value.trim() === value && !value.includes(",");
}
