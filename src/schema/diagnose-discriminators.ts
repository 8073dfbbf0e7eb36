import { discriminatorOf, flattenNode } from "./diagnose-path.js";
import {
  declaredTypes,
  isSchemaNode,
  resolveLocalRef,
  type SchemaNode,
  schemaListKeywords,
  schemaMapKeywords,
  schemaValueKeywords,
} from "./schema-nodes.js";

/**
 * A copy of a schema in which every `oneOf` whose alternatives a required, string-valued tag
 * property tells apart carries Ajv's `discriminator` keyword (unless it has one already).
 * With Ajv's `discriminator` option, only the alternative the tag names is then validated, so
 * its errors are the only ones, whatever the other alternatives or `$ref`s look like. The
 * semantics stay those of the `oneOf`: alternatives with distinct required tags never overlap,
 * and the union must accept objects only (a declared `discriminator` is dropped otherwise).
 * Only shapes Ajv accepts are marked: each alternative (or its `$ref` target) declares the tag
 * directly with `const` or `enum` and requires it.
 */
export function withDiscriminators(schema: SchemaNode): SchemaNode {
  const mark = (value: unknown): unknown => (isSchemaNode(value) ? markNode(value) : value);
  const markNode = (node: SchemaNode): SchemaNode => {
    const copy: SchemaNode = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (schemaMapKeywords.includes(keyword) && isSchemaNode(value)) {
        copy[keyword] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, mark(child)]));
      } else if (schemaListKeywords.includes(keyword) && Array.isArray(value)) {
        copy[keyword] = value.map(mark);
      } else if (schemaValueKeywords.includes(keyword)) {
        copy[keyword] = mark(value);
      } else {
        copy[keyword] = value;
      }
    }
    const tag = node.discriminator === undefined ? ajvTag(node.oneOf, schema) : undefined;
    if (tag === undefined && node.discriminator === undefined) return copy;
    if (Array.isArray(node.oneOf) && objectOnly(node, schema)) {
      if (tag !== undefined) copy.discriminator = { propertyName: tag };
      // Ajv then skips the `oneOf` and checks the tag of objects only: the type keeps out non-objects as the `oneOf` did.
      copy.type = "object";
    } else {
      // A declared discriminator without a `oneOf` of objects only: plain JSON Schema semantics win.
      delete copy.discriminator;
    }
    return copy;
  };
  return markNode(schema);
}

/** The union accepts objects only: it says so, or every alternative does. */
function objectOnly(node: SchemaNode, root: unknown): boolean {
  const isObjectType = (types: string[]) => types.length === 1 && types[0] === "object";
  if (node.type !== undefined) return isObjectType(declaredTypes(node));
  const alternatives: unknown[] = Array.isArray(node.oneOf) ? node.oneOf : [];
  return alternatives.every((alternative) =>
    flattenNode(alternative, root).some((part) => isObjectType(declaredTypes(part))),
  );
}

function ajvTag(alternatives: unknown, root: unknown): string | undefined {
  if (!Array.isArray(alternatives) || alternatives.length < 2) return undefined;
  const discriminator = discriminatorOf(alternatives, root);
  if (discriminator === undefined || !discriminator.values.every((value) => typeof value === "string")) {
    return undefined;
  }
  const { property } = discriminator;
  const direct = alternatives.every((alternative) => {
    const branch =
      isSchemaNode(alternative) && typeof alternative.$ref === "string" && !isSchemaNode(alternative.properties)
        ? resolveLocalRef(root, alternative.$ref)
        : alternative;
    if (!isSchemaNode(branch) || !isSchemaNode(branch.properties)) return false;
    const tagSchema = branch.properties[property];
    const required = Array.isArray(branch.required) && branch.required.includes(property);
    return required && isSchemaNode(tagSchema) && ("const" in tagSchema || Array.isArray(tagSchema.enum));
  });
  return direct ? property : undefined;
}
