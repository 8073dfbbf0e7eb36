/** Small, dependency-free helpers for reading JSON Schema documents (draft-07 to 2020-12). */

import { pointerTokens } from "./json-pointer.js";

export type SchemaNode = Record<string, unknown>;

/** Keywords whose value is a map of subschemas. */
export const schemaMapKeywords = [
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "dependencies",
];

/** Keywords whose value is a list of subschemas (`items` may be one too, in draft-07). */
export const schemaListKeywords = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/** Keywords whose value is one subschema. */
export const schemaValueKeywords = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
];

/** Keywords that only describe and never change what validates. */
export const annotationKeywords = new Set([
  "title",
  "description",
  "$comment",
  "examples",
  "example",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
]);

export function isSchemaNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value a list of pointer segments leads to inside a JSON document, if any. */
export function valueAt(document: unknown, segments: readonly string[]): unknown {
  let current = document;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else if (isSchemaNode(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return undefined;
    }
  }
  return current;
}

/** Resolves a same-document `$ref` (`#`, `#/json/pointer`); anything else is left to Ajv. */
export function resolveLocalRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  const segments = pointerTokens(ref);
  return segments === undefined ? undefined : valueAt(root, segments);
}

/** The JSON type of a value, telling integers from other numbers and never a boolean from an integer. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "string") return "string";
  return "object";
}

export const jsonTypes: ReadonlySet<string> = new Set([
  "null",
  "boolean",
  "object",
  "array",
  "number",
  "string",
  "integer",
]);

/** The `type` keyword of a node as a list of the seven JSON types (anything else dropped). */
export function declaredTypes(node: SchemaNode): string[] {
  const type = node.type;
  const types = typeof type === "string" ? [type] : Array.isArray(type) ? type : [];
  return types.filter((item): item is string => typeof item === "string" && jsonTypes.has(item));
}

/** The value a one-value alternative is pinned to (`const`, or a one-element `enum`). */
export function pinnedValue(node: SchemaNode): { value: unknown } | undefined {
  if (Object.hasOwn(node, "const")) return { value: node.const };
  if (Array.isArray(node.enum) && node.enum.length === 1) return { value: node.enum[0] };
  return undefined;
}
