import { impliedBy } from "./implied.js";
import type { Projected, Shape } from "./shape-types.js";
import {
  intersectTypes,
  intersectValues,
  type JsonType,
  typeAccepts,
  unionTypes,
  unionTypesOf,
  unionValues,
  unique,
  valueType,
} from "./values.js";

/**
 * The part of a JSON Schema node that a Gemini projection keeps, in a form that can be
 * intersected (`allOf`, `$ref` with siblings) and united (`anyOf`, `oneOf`) without ever
 * becoming stricter than the schemas it came from.
 */

/** Alternatives one intersection may produce before one side is reduced to its common shape. */
const maxAlternatives = 32;

/** Whether a shape lets instances of this type through. */
export function acceptsType(shape: Shape, type: JsonType): boolean {
  if (shape.anyOf) return shape.anyOf.some((alternative) => acceptsType(alternative, type));
  return shape.types === undefined || typeAccepts(shape.types, type);
}

/** A shape that accepts what any of `alternatives` accepts, written as an `anyOf` when there are several. */
export function alternativesOf(origin: string, alternatives: readonly Projected[], description?: string): Projected {
  const kept = alternatives.flatMap((alternative) =>
    alternative === false ? [] : (alternative.anyOf ?? [alternative]),
  );
  // One alternative that accepts anything makes the others moot.
  const only = kept.find(isOpen) ?? (kept.length === 1 ? kept[0] : undefined);
  if (kept.length === 0) return false;
  if (only !== undefined) return withDescription(only, description ?? only.description);
  const shape: Shape = { origin, anyOf: kept };
  if (description !== undefined) shape.description = description;
  return shape;
}

/** The common shape of a shape's alternatives, or the shape itself when it has none. */
export function commonShapeOf(shape: Projected): Projected {
  if (shape === false || shape.anyOf === undefined) return shape;
  const common = shape.anyOf.reduce<Projected>((result, alternative) => unite(result, alternative), false);
  return common === false ? false : withDescription(common, shape.description);
}

/** What every instance accepted by both `a` and `b` must match. Exact on this vocabulary. */
export function intersect(a: Projected, b: Projected): Projected {
  if (a === false || b === false) return false;
  // The shortcuts keep a tag: the result is then the definition itself, but for its description.
  if (a.ref !== undefined && a.ref.key === b.ref?.key) return withDescription(a, a.description ?? b.description);
  if (impliedBy(a, b)) return { ...withDescription(b, a.description ?? b.description), origin: a.origin };
  if (impliedBy(b, a)) return withDescription(a, a.description ?? b.description);
  if (a.anyOf || b.anyOf) return intersectAlternatives(a, b);
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
  const cut = a.cut ?? b.cut;
  if (cut !== undefined) shape.cut = cut;
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
  if (a.ref !== undefined && a.ref.key === b.ref?.key) {
    return withDescription(a, a.description === b.description ? a.description : undefined);
  }
  if (a.anyOf || b.anyOf)
    return alternativesOf(a.origin, [a, b], a.description === b.description ? a.description : undefined);
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
  const cut = a.cut ?? b.cut;
  if (cut !== undefined) shape.cut = cut;
  return normalize(shape);
}

/**
 * Makes `types` and `enum` agree: enum values of a type the node does not accept go, the
 * types narrow to those of the values. A node left with no type or no value matches nothing.
 */
export function normalize(shape: Shape): Projected {
  if (shape.anyOf !== undefined) return shape;
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

/**
 * `shape` with another description (or none). A tagged shape keeps its tag: a description is an
 * annotation, and the writer puts one that differs from the definition's beside the reference.
 */
export function withDescription(shape: Shape, description: string | undefined): Shape {
  if (shape.description === description) return shape;
  const copy: Shape = { ...shape };
  if (description === undefined) delete copy.description;
  else copy.description = description;
  return copy;
}

/** Whether a shape accepts every instance. */
function isOpen(shape: Shape): boolean {
  return Object.keys(shape).every((key) => key === "origin" || key === "description" || key === "cut");
}

/** (A1 or A2 …) and (B1 or B2 …) is (A1 and B1) or (A1 and B2) or …, while that stays small. */
function intersectAlternatives(a: Shape, b: Shape): Projected {
  // The description of a side without alternatives describes the whole node, not each alternative.
  let left = a.anyOf ?? [withDescription(a, undefined)];
  let right = b.anyOf ?? [withDescription(b, undefined)];
  if (left.length * right.length > maxAlternatives) {
    // Too many combinations: the side with more alternatives is read as its common shape, which is wider.
    const reduce = (alternatives: Shape[]) => {
      const common = commonShapeOf({ origin: a.origin, anyOf: alternatives });
      return common === false ? [] : [common];
    };
    if (left.length >= right.length) left = reduce(left);
    else right = reduce(right);
  }
  const combined = left.flatMap((one) => right.map((other) => intersect(one, other)));
  return alternativesOf(a.origin, combined, a.description ?? b.description);
}

/** The values a shape accepts when they can be listed: its enum, or `[null]` for a null-only node. */
function enumerated(shape: Shape): unknown[] | undefined {
  if (shape.enum) return shape.enum;
  if (shape.types?.length === 1 && shape.types[0] === "null") return [null];
  return undefined;
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
