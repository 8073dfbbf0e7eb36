import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";
import { forEachReachableNode } from "./schema-walk.js";

// Where Ajv validates a `oneOf` by its `discriminator` (the prepared schema marks tagged unions for it), Ajv checks
// the tag and then the one alternative it names, never the others. The interpretive validator knows no
// `discriminator`: its errors are reduced to what Ajv would report, with the mapping Ajv builds, by Ajv's rules.

/** Ajv's keywords (every dialect): an alternative with any of these beside `$ref` is not looked through. */
const ajvRules = new Set(
  (
    "$comment $dynamicAnchor $dynamicRef $recursiveAnchor $recursiveRef $ref additionalItems additionalProperties " +
    "allOf anyOf const contains dependencies dependentRequired dependentSchemas discriminator else enum " +
    "exclusiveMaximum exclusiveMinimum format id if items maxContains maxItems maxLength maxProperties maximum " +
    "minContains minItems minLength minProperties minimum multipleOf not nullable oneOf pattern patternProperties " +
    "prefixItems properties propertyNames required then type unevaluatedItems unevaluatedProperties uniqueItems"
  ).split(" "),
);

/** Resolves an alternative's `$ref` as the validator does (pointer, anchor or `$id`). */
export type RefResolver = (node: SchemaNode) => unknown;

/**
 * The alternative each tag value names, as Ajv maps a `discriminator` (`const` or `enum` strings of
 * `properties/<tag>`, through a lone `$ref`); undefined where Ajv refuses it (a `mapping`, a tag not required
 * everywhere, values that are not unique strings, …), which makes Ajv compile the whole schema without them.
 */
export function ajvDiscriminatorMapping(node: SchemaNode, resolve: RefResolver): Map<string, number> | undefined {
  const discriminator = node.discriminator;
  const oneOf = node.oneOf;
  if (!isSchemaNode(discriminator) || !Array.isArray(oneOf)) return undefined;
  const tag = discriminator.propertyName;
  if (typeof tag !== "string" || discriminator.mapping) return undefined;
  const requires = (schema: unknown) =>
    isSchemaNode(schema) && Array.isArray(schema.required) && schema.required.includes(tag);
  const mapping = new Map<string, number>();
  let tagRequired = true;
  for (const [index, alternative] of oneOf.entries()) {
    const schema =
      isSchemaNode(alternative) && alternative.$ref && !hasRulesButRef(alternative)
        ? resolve(alternative)
        : alternative;
    const tagSchema = isSchemaNode(schema) && isSchemaNode(schema.properties) ? schema.properties[tag] : undefined;
    if (!isSchemaNode(tagSchema)) return undefined;
    tagRequired &&= requires(node) || requires(schema);
    // Ajv reads `const` when it is truthy, else `enum`.
    const values = tagSchema.const ? [tagSchema.const] : Array.isArray(tagSchema.enum) ? tagSchema.enum : undefined;
    if (values === undefined) return undefined;
    for (const value of values) {
      if (typeof value !== "string" || mapping.has(value)) return undefined;
      mapping.set(value, index);
    }
  }
  return tagRequired ? mapping : undefined;
}

/** Whether Ajv compiles a schema with its discriminator option: it has one, and Ajv can use every one it has. */
export function ajvUsesDiscriminators(schema: unknown, resolve: RefResolver): boolean {
  let found = false;
  let usable = true;
  forEachReachableNode(schema, resolve, (node) => {
    if (node.discriminator === undefined) return;
    found = true;
    usable &&= ajvDiscriminatorMapping(node, resolve) !== undefined;
  });
  return found && usable;
}

function hasRulesButRef(node: SchemaNode): boolean {
  return Object.keys(node).some((keyword) => keyword !== "$ref" && ajvRules.has(keyword));
}
