import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";
import { mapSubschemas } from "./schema-walk.js";

/**
 * A copy of a schema in which every `dependentSchemas: {p: S}` became an `allOf` entry
 * `{if: {required: [p]}, then: S}`. Both validate alike: S applies exactly when the answer has p, and the
 * properties S evaluates count for `unevaluatedProperties` exactly then. Ajv 8 gets the first form wrong: beside
 * `unevaluatedProperties`, a `dependentSchemas` entry that does not apply makes it forget the properties the
 * sibling `properties` evaluated (ajv-validator/ajv#2483), so valid answers are refused; it gets `if`/`then` right.
 */
export function withoutDependentSchemas(schema: SchemaNode): SchemaNode {
  const rewrite = (value: unknown): unknown => (isSchemaNode(value) ? rewriteNode(value) : value);
  const rewriteNode = (node: SchemaNode): SchemaNode => {
    const copy = mapSubschemas(node, rewrite);
    if (!isSchemaNode(copy.dependentSchemas)) return copy;
    const conditions = Object.entries(copy.dependentSchemas).map(([name, dependent]) => ({
      if: { required: [name] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords.
      then: dependent,
    }));
    delete copy.dependentSchemas;
    copy.allOf = [...(Array.isArray(copy.allOf) ? copy.allOf : []), ...conditions];
    return copy;
  };
  return rewriteNode(schema);
}
