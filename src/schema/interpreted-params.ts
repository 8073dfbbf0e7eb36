import { pointerTokens } from "./json-pointer.js";
import { isSchemaNode, valueAt } from "./schema-nodes.js";

// The parameters Ajv reports that the interpretive validator does not: read from the schema and the answer, where
// Ajv reads them, and Ajv's own way of checking where it differs.

/** The names a `required` lists that the object at `instancePath` lacks, in the schema's order. */
export function missing(required: unknown, answer: unknown, instancePath: string): string[] {
  const instance = valueAt(answer, pointerTokens(instancePath) ?? []);
  if (!Array.isArray(required) || !isSchemaNode(instance)) return [];
  return required.filter((name): name is string => typeof name === "string" && !Object.hasOwn(instance, name));
}

/** The dependent names missing (Ajv's `dependentRequired`/`dependencies` parameters, one per missing name). */
export function dependentMissing(
  dependencies: unknown,
  answer: unknown,
  instancePath: string,
): Record<string, unknown>[] {
  const instance = valueAt(answer, pointerTokens(instancePath) ?? []);
  if (!isSchemaNode(dependencies) || !isSchemaNode(instance)) return [];
  return Object.entries(dependencies).flatMap(([property, names]) =>
    Object.hasOwn(instance, property) && Array.isArray(names)
      ? names
          .filter((name): name is string => typeof name === "string" && !Object.hasOwn(instance, name))
          .map((missingProperty) => ({ property, missingProperty, depsCount: names.length, deps: names.join(", ") }))
      : [],
  );
}

/**
 * Ajv's `multipleOf` (with `multipleOfPrecision: 9`) takes a quotient within 1e-9 of an integer; the interpretive
 * validator divides exactly in decimal and refuses e.g. 0.30000000000000004 against 0.1, which Ajv takes.
 */
export function withinAjvPrecision(value: unknown, divisor: unknown): boolean {
  if (typeof value !== "number" || typeof divisor !== "number" || divisor === 0) return false;
  const quotient = value / divisor;
  return Math.abs(Math.round(quotient) - quotient) <= 1e-9;
}

/**
 * Ajv's `uniqueItems` where `items` declares scalar types only: it compares the items of those types and skips the
 * others (which fail `items` anyway); elsewhere it compares all, as the interpretive validator does.
 */
export function ajvSeesDuplicates(items: unknown, array: unknown): boolean {
  if (!Array.isArray(array)) return false;
  const declared = isSchemaNode(items) ? items.type : undefined;
  const types = (typeof declared === "string" ? [declared] : Array.isArray(declared) ? declared : []).concat(
    isSchemaNode(items) && items.nullable === true ? ["null"] : [],
  );
  if (types.length === 0 || types.includes("object") || types.includes("array")) return true;
  const ofType = (item: unknown) =>
    types.some((type) =>
      type === "integer" ? Number.isInteger(item) : type === "null" ? item === null : typeof item === type,
    );
  const seen = array.filter(ofType);
  return new Set(seen).size < seen.length;
}
