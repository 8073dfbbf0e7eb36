import { canonicalJson } from "../json/canonical-json.js";
/**
 * The part of a JSON Schema node that a Gemini projection keeps, in a form that can be
 * intersected (`allOf`, `$ref` with siblings) and united (`anyOf`, `oneOf`) without ever
 * becoming stricter than the schemas it came from.
 */

/** The seven JSON Schema types. */
export type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

export const jsonTypes: readonly JsonType[] = ["string", "number", "integer", "boolean", "object", "array", "null"];

/**
 * One projected node. A missing member constrains nothing; `false` (see {@link Projected})
 * accepts nothing. `types` is never empty.
 */
export interface Shape {
  /** The JSON pointer of the schema node this shape was read from, for the omitted list. */
  origin: string;
  types?: JsonType[];
  enum?: unknown[];
  properties?: Map<string, Projected>;
  required?: string[];
  /** What properties outside `properties` must match (`false`: none allowed). Used only for merging. */
  additional?: Projected;
  items?: Projected;
  description?: string;
  propertyOrdering?: string[];
}

/** A projected node, or `false` for a node that no instance can match. */
export type Projected = Shape | false;

/** Whether a shape lets instances of this type through. */
export function acceptsType(shape: Shape, type: JsonType): boolean {
  return shape.types === undefined || typeAccepts(shape.types, type);
}

/** What every instance accepted by both `a` and `b` must match. Exact on this vocabulary. */
export function intersect(a: Projected, b: Projected): Projected {
  if (a === false || b === false) return false;
  const shape: Shape = { origin: a.origin };
  const types = a.types && b.types ? intersectTypes(a.types, b.types) : (a.types ?? b.types);
  if (types) shape.types = types;
  const values = a.enum && b.enum ? intersectValues(a.enum, b.enum) : (a.enum ?? b.enum);
  if (values) shape.enum = values;
  if (a.properties || b.properties) shape.properties = intersectProperties(a, b);
  if (a.required || b.required) shape.required = unique([...(a.required ?? []), ...(b.required ?? [])]);
  const additional = intersectOptional(a.additional, b.additional);
  if (additional !== undefined) shape.additional = additional;
  const items = intersectOptional(a.items, b.items);
  if (items !== undefined) shape.items = items;
  const description = a.description ?? b.description;
  if (description !== undefined) shape.description = description;
  const propertyOrdering = a.propertyOrdering ?? b.propertyOrdering;
  if (propertyOrdering) shape.propertyOrdering = propertyOrdering;
  return normalize(shape);
}

/**
 * The common shape of two alternatives: it accepts everything either accepts. Properties are
 * the union of both sides (a property one side does not declare takes what that side allows
 * for undeclared properties), `required` the intersection.
 */
export function unite(a: Projected, b: Projected): Projected {
  if (a === false) return b;
  if (b === false) return a;
  const shape: Shape = { origin: a.origin };
  if (a.types && b.types) shape.types = unionTypes(a.types, b.types);
  const valuesA = enumerated(a);
  const valuesB = enumerated(b);
  if (valuesA && valuesB) shape.enum = unionValues(valuesA, valuesB);
  const objectsA = acceptsType(a, "object");
  const objectsB = acceptsType(b, "object");
  if (objectsA && objectsB) uniteObjectParts(a, b, shape);
  else if (objectsA || objectsB) copyObjectPart(objectsA ? a : b, shape);
  const arraysA = acceptsType(a, "array");
  const arraysB = acceptsType(b, "array");
  if (arraysA && arraysB) {
    if (a.items !== undefined && b.items !== undefined) shape.items = unite(a.items, b.items);
  } else if (arraysA || arraysB) {
    const items = (arraysA ? a : b).items;
    if (items !== undefined) shape.items = items;
  }
  if (a.description !== undefined && a.description === b.description) shape.description = a.description;
  return normalize(shape);
}

/**
 * Makes `types` and `enum` agree: enum values of a type the node does not accept go, the
 * types narrow to those of the values. A node left with no type or no value matches nothing.
 */
export function normalize(shape: Shape): Projected {
  if (shape.enum !== undefined) {
    const allowed = shape.types;
    const values = allowed ? shape.enum.filter((value) => typeAccepts(allowed, valueType(value))) : shape.enum;
    if (values.length === 0) return false;
    const valueTypes = unionTypesOf(values.map(valueType));
    shape.enum = values;
    shape.types = allowed ? intersectTypes(allowed, valueTypes) : valueTypes;
  }
  if (shape.types !== undefined && shape.types.length === 0) return false;
  return shape;
}

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

function typeAccepts(types: readonly JsonType[], type: JsonType): boolean {
  return types.includes(type) || (type === "integer" && types.includes("number"));
}

function intersectTypes(a: readonly JsonType[], b: readonly JsonType[]): JsonType[] {
  const result: JsonType[] = [];
  for (const type of a) {
    if (typeAccepts(b, type)) result.push(type);
    else if (type === "number" && b.includes("integer")) result.push("integer");
  }
  return unique(result);
}

function unionTypes(a: readonly JsonType[], b: readonly JsonType[]): JsonType[] {
  return unionTypesOf([...a, ...b]);
}

/** Distinct types, with `integer` folded into `number` when both appear. */
function unionTypesOf(types: readonly JsonType[]): JsonType[] {
  const distinct = unique(types);
  return distinct.includes("number") ? distinct.filter((type) => type !== "integer") : distinct;
}

/** The values a shape accepts when they can be listed: its enum, or `[null]` for a null-only node. */
function enumerated(shape: Shape): unknown[] | undefined {
  if (shape.enum) return shape.enum;
  if (shape.types?.length === 1 && shape.types[0] === "null") return [null];
  return undefined;
}

function intersectValues(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  const keys = new Set(b.map(canonicalJson));
  return a.filter((value) => keys.has(canonicalJson(value)));
}

function unionValues(a: readonly unknown[], b: readonly unknown[]): unknown[] {
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

function intersectOptional(a: Projected | undefined, b: Projected | undefined): Projected | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return intersect(a, b);
}

function intersectProperties(a: Shape, b: Shape): Map<string, Projected> {
  const result = new Map<string, Projected>();
  for (const [name, schema] of a.properties ?? []) {
    const other = b.properties?.get(name) ?? b.additional;
    result.set(name, other === undefined ? schema : intersect(schema, other));
  }
  for (const [name, schema] of b.properties ?? []) {
    if (result.has(name)) continue;
    result.set(name, a.additional === undefined ? schema : intersect(schema, a.additional));
  }
  return result;
}

function uniteObjectParts(a: Shape, b: Shape, into: Shape): void {
  if (a.properties || b.properties) {
    const properties = new Map<string, Projected>();
    const names = unique([...(a.properties?.keys() ?? []), ...(b.properties?.keys() ?? [])]);
    for (const name of names) properties.set(name, unite(declaredOrAllowed(a, name), declaredOrAllowed(b, name)));
    into.properties = properties;
  }
  const required = (a.required ?? []).filter((name) => b.required?.includes(name));
  if (required.length > 0) into.required = required;
  if (a.additional !== undefined && b.additional !== undefined) into.additional = unite(a.additional, b.additional);
  if (a.propertyOrdering && sameStrings(a.propertyOrdering, b.propertyOrdering)) {
    into.propertyOrdering = a.propertyOrdering;
  }
}

function copyObjectPart(from: Shape, into: Shape): void {
  if (from.properties) into.properties = from.properties;
  if (from.required) into.required = from.required;
  if (from.additional !== undefined) into.additional = from.additional;
  if (from.propertyOrdering) into.propertyOrdering = from.propertyOrdering;
}

/** What one alternative allows for a property: its declared schema, else its rule for the rest. */
function declaredOrAllowed(shape: Shape, name: string): Projected {
  return shape.properties?.get(name) ?? shape.additional ?? { origin: shape.origin };
}

function sameStrings(a: readonly string[], b: readonly string[] | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((item, index) => item === b[index]);
}

function unique<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}
