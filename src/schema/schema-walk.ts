import {
  isSchemaNode,
  type SchemaNode,
  schemaListKeywords,
  schemaMapKeywords,
  schemaValueKeywords,
} from "./schema-nodes.js";

/**
 * A copy of a schema node whose subschemas (in `properties`, `allOf`, `items`, `not`, …) are replaced by what
 * `child` makes of them; every other member is copied as it is. Map keys are defined, never assigned, so that a
 * property named `__proto__` stays a property.
 */
export function mapSubschemas(node: SchemaNode, child: (subschema: unknown) => unknown): SchemaNode {
  const copy: SchemaNode = {};
  for (const [keyword, value] of Object.entries(node)) {
    let mapped: unknown = value;
    if (schemaMapKeywords.includes(keyword) && isSchemaNode(value)) {
      mapped = Object.fromEntries(Object.entries(value).map(([name, subschema]) => [name, child(subschema)]));
    } else if (schemaListKeywords.includes(keyword) && Array.isArray(value)) {
      mapped = value.map(child);
    } else if (schemaValueKeywords.includes(keyword)) {
      mapped = child(value);
    }
    Object.defineProperty(copy, keyword, { value: mapped, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** Calls `visit` on every schema node of a schema, the root first (boolean subschemas are not nodes). */
export function forEachSchemaNode(schema: unknown, visit: (node: SchemaNode) => void): void {
  const walk = (value: unknown): void => {
    if (!isSchemaNode(value)) return;
    visit(value);
    mapSubschemas(value, (subschema) => {
      walk(subschema);
      return subschema;
    });
  };
  walk(schema);
}

/**
 * Calls `visit` on every schema node a validator reaches from the root: through subschemas and `$ref`s (resolved by
 * `resolve`), not into `$defs`/`definitions` otherwise, as Ajv compiles only what it reaches.
 */
export function forEachReachableNode(
  schema: unknown,
  resolve: (node: SchemaNode) => unknown,
  visit: (node: SchemaNode) => void,
): void {
  const seen = new Set<SchemaNode>();
  const walk = (value: unknown): void => {
    if (!isSchemaNode(value) || seen.has(value)) return;
    seen.add(value);
    visit(value);
    if (typeof value.$ref === "string" || typeof value.$recursiveRef === "string") walk(resolve(value));
    const { $defs: _defs, definitions: _definitions, ...rest } = value;
    mapSubschemas(rest, (subschema) => {
      walk(subschema);
      return subschema;
    });
  };
  walk(schema);
}
