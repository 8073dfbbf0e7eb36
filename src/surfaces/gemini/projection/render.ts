import type { Omissions } from "./omissions.js";
import type { Projected, Shape } from "./shape-types.js";
import type { JsonType } from "./values.js";

/**
 * Writes a projected shape as the OpenAPI subset `responseSchema` takes; the parts both writers
 * share. Both leave a node open rather than make it stricter. The `responseJsonSchema` writer is
 * in json-schema.ts.
 */

export type SchemaNode = Record<string, unknown>;

/**
 * `responseSchema`: one uppercase type per node, `nullable` for null, string enums only, no
 * `$ref` or `additionalProperties`. A union of types becomes an `anyOf` of one node per type,
 * the form the Gemini SDK itself sends for a type array. A node with no known type is left
 * without `type` (TYPE_UNSPECIFIED), which constrains nothing.
 */
export function renderOpenApiSchema(shape: Projected, omissions: Omissions): SchemaNode {
  if (shape === false) return {};
  if (shape.cut !== undefined) omissions.add(shape.origin, 0, shape.cut);
  const node: SchemaNode = {};
  const types = shape.types?.filter((type) => type !== "null");
  if (types === undefined || types.length === 0) {
    if (shape.description !== undefined) node.description = shape.description;
    if (types !== undefined) {
      node.nullable = true;
      omissions.add(shape.origin, 0, "type null (responseSchema has no null-only type)");
    } else if ((shape.properties !== undefined && shape.properties.size > 0) || shape.items !== undefined) {
      // Gemini takes properties only on OBJECT and items only on ARRAY nodes.
      omissions.add(shape.origin, 0, "structure of a node without a single type");
    }
    return node;
  }
  const [onlyType] = types;
  if (types.length === 1 && onlyType !== undefined) {
    Object.assign(node, singleTypeNode(onlyType, shape, omissions));
  } else {
    if (shape.description !== undefined) node.description = shape.description;
    const branch: Shape = { ...shape };
    delete branch.description;
    node.anyOf = types.map((type) => singleTypeNode(type, branch, omissions));
  }
  if (shape.types?.includes("null")) node.nullable = true;
  return node;
}

function singleTypeNode(type: JsonType, shape: Shape, omissions: Omissions): SchemaNode {
  const node: SchemaNode = { type: type.toUpperCase() };
  if (shape.description !== undefined) node.description = shape.description;
  const values = shape.enum?.filter((value) => valueFits(value, type));
  if (values && values.length > 0) {
    if (type !== "string") omissions.add(shape.origin, 0, "enum (non-string values)");
    else if (values.includes("")) omissions.add(shape.origin, 0, "enum (empty string value)");
    else node.enum = [...values];
  }
  const write = (child: Projected) => renderOpenApiSchema(child, omissions);
  if (type === "object") Object.assign(node, objectPart(shape, omissions, write));
  if (type === "array") {
    const items = shape.items === undefined || shape.items === false ? { origin: shape.origin } : shape.items;
    node.items = renderOpenApiSchema(items, omissions);
  }
  return node;
}

/**
 * `properties` (a property no instance may have is left out, so Gemini will not emit it),
 * `propertyOrdering` restricted to those properties, and `required` restricted to them too.
 */
export function objectPart(shape: Shape, omissions: Omissions, write: (shape: Projected) => SchemaNode): SchemaNode {
  const part: SchemaNode = {};
  const names: string[] = [];
  if (shape.properties) {
    const properties: SchemaNode = {};
    for (const [name, property] of shape.properties) {
      if (property === false) continue;
      defineOwn(properties, name, write(property));
      names.push(name);
    }
    // Gemini rejects an empty properties map ("should be non-empty for OBJECT type").
    if (names.length > 0) part.properties = properties;
  }
  const ordering = shape.propertyOrdering?.filter((name) => names.includes(name));
  if (ordering && ordering.length > 0) part.propertyOrdering = ordering;
  if (shape.required) {
    const required = shape.required.filter((name) => names.includes(name));
    if (required.length < shape.required.length) {
      omissions.add(shape.origin, 0, "required (names without a property schema)");
    }
    if (required.length > 0) part.required = required;
  }
  return part;
}

function valueFits(value: unknown, type: JsonType): boolean {
  if (type === "integer") return Number.isInteger(value);
  return type === "number" ? typeof value === "number" : typeof value === type;
}

export function isScalar(value: unknown): boolean {
  return value === null || typeof value !== "object";
}

/** A property named `__proto__` must become an own property, not the prototype. */
function defineOwn(record: SchemaNode, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
