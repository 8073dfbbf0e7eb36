import type { Omissions } from "./omissions.js";
import type { Projected, Shape } from "./shape-types.js";

/**
 * The v21 "outer" contract: the top level keeps its properties, `required`, `items` and enum;
 * each property (or the item) keeps only its type, plus its enum when it is a scalar.
 */
export function outerShape(shape: Projected, omissions: Omissions): Projected {
  if (shape === false) return false;
  const outer: Shape = { origin: shape.origin };
  if (shape.types) outer.types = shape.types;
  if (shape.enum) outer.enum = shape.enum;
  if (shape.description !== undefined) outer.description = shape.description;
  if (shape.propertyOrdering) outer.propertyOrdering = shape.propertyOrdering;
  if (shape.required) outer.required = shape.required;
  if (shape.properties) {
    outer.properties = new Map([...shape.properties].map(([name, property]) => [name, typeOnly(property, omissions)]));
  }
  if (shape.items !== undefined) outer.items = typeOnly(shape.items, omissions);
  if (shape.additional !== undefined) outer.additional = typeOnly(shape.additional, omissions);
  return outer;
}

/** Keeps a node's type (and scalar enum and description); its nested structure is listed once. */
function typeOnly(shape: Projected, omissions: Omissions): Projected {
  if (shape === false) return false;
  const reduced: Shape = { origin: shape.origin };
  if (shape.types) reduced.types = shape.types;
  if (shape.description !== undefined) reduced.description = shape.description;
  const scalar = shape.types?.every((type) => type !== "object" && type !== "array") ?? false;
  if (shape.enum && scalar) reduced.enum = shape.enum;
  const nested =
    (shape.properties !== undefined && shape.properties.size > 0) ||
    shape.items !== undefined ||
    (shape.required !== undefined && shape.required.length > 0) ||
    (shape.additional !== undefined && shape.additional !== false) ||
    (shape.enum !== undefined && !scalar);
  if (nested) omissions.add(shape.origin, 1, "nested structure");
  return reduced;
}
