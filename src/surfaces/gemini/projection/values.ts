import { canonicalJson } from "../../../json/canonical-json.js";

/** The JSON Schema types and values a projected shape reasons about. */

/** The seven JSON Schema types. */
export type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

export const jsonTypes: readonly JsonType[] = ["string", "number", "integer", "boolean", "object", "array", "null"];

const jsonTypeNames: ReadonlySet<string> = new Set(jsonTypes);

/** The JSON Schema type of a JSON value; an integral number is an `integer`. */
export function valueType(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
      return Number.isInteger(value) ? "integer" : "number";
    case "boolean":
      return "boolean";
    default:
      return "object";
  }
}

/** Whether a list of types lets values of `type` through (`number` takes integers). */
export function typeAccepts(types: readonly JsonType[], type: JsonType): boolean {
  return types.includes(type) || (type === "integer" && types.includes("number"));
}

export function intersectTypes(a: readonly JsonType[], b: readonly JsonType[]): JsonType[] {
  const result: JsonType[] = [];
  for (const type of a) {
    if (typeAccepts(b, type)) result.push(type);
    else if (type === "number" && b.includes("integer")) result.push("integer");
  }
  return unique(result);
}

export function unionTypes(a: readonly JsonType[], b: readonly JsonType[]): JsonType[] {
  return unionTypesOf([...a, ...b]);
}

/** Distinct types, with `integer` folded into `number` when both appear. */
export function unionTypesOf(types: readonly JsonType[]): JsonType[] {
  const distinct = unique(types);
  return distinct.includes("number") ? distinct.filter((type) => type !== "integer") : distinct;
}

export function intersectValues(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  const keys = new Set(b.map(canonicalJson));
  return a.filter((value) => keys.has(canonicalJson(value)));
}

export function unionValues(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  const result = [...a];
  const keys = new Set(a.map(canonicalJson));
  for (const value of b) {
    const key = canonicalJson(value);
    if (keys.has(key)) continue;
    keys.add(key);
    result.push(value);
  }
  return result;
}

export function unique<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}

/** A `type` keyword as a list of distinct JSON types, or undefined when it is not one. */
export function parseTypes(value: unknown): JsonType[] | undefined {
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  if (!list.every(isJsonType)) return undefined;
  return [...new Set(list)];
}

function isJsonType(value: unknown): value is JsonType {
  return typeof value === "string" && jsonTypeNames.has(value);
}

export function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}
