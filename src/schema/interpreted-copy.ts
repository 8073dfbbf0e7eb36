import { dereference, type Schema } from "@cfworker/json-schema";
import { numberFormats } from "./interpreted-formats.js";
import type { SchemaDialect } from "./prepare-schema.js";
import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";
import { mapSubschemas } from "./schema-walk.js";

/**
 * The prepared schema as the interpretive validator (@cfworker/json-schema) is given it: a copy of its own (the
 * validator marks the nodes it reads), in which whatever Ajv reads otherwise is made to read alike:
 * - keywords the dialect's Ajv class does not know (draft-07: `prefixItems`, `unevaluated*`, `dependent*`,
 *   `min/maxContains`, `$recursive*`; 2019-09: `prefixItems`; 2020-12: `additionalItems`) are left out, as Ajv
 *   ignores them;
 * - `nullable: true` (which Ajv honours beside a `type`) adds `null` to the type;
 * - ajv-formats' number formats (`int32`, `int64`) become the range checks they are, in an `allOf` entry;
 * - a `false` subschema becomes `{not: {}}`, whose failure the validator reports with its place in the schema;
 * - `$dynamicRef`/`$dynamicAnchor` (unknown to the validator) become `$ref`/`$anchor`, which resolve alike within one
 *   schema resource; across nested `$id`s the resolution is static (see the README's known differences).
 * The maps lead from the copy back to the prepared schema, where the diagnostics read.
 */
export interface InterpretedSchema {
  readonly root: Schema | boolean;
  /** Every node of the copy by its absolute URI, `$id`s and anchors, for `$ref`s. */
  readonly lookup: Record<string, Schema | boolean>;
  /** The prepared node each node of the copy was made from. */
  readonly originals: WeakMap<object, SchemaNode>;
  /** The nodes that stand for a `false` subschema. */
  readonly falseSchemas: WeakSet<object>;
  /** The `allOf` entries that stand for a number format of the node they are in, by format name. */
  readonly formatChecks: WeakMap<object, string>;
}

const unknownTo: Record<SchemaDialect, readonly string[]> = {
  "draft-07": [
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentSchemas",
    "dependentRequired",
    "minContains",
    "maxContains",
    "$recursiveRef",
    "$recursiveAnchor",
  ],
  "2019-09": ["prefixItems"],
  "2020-12": ["additionalItems"],
};

/** The interpretive validator's copy of a prepared schema; throws where it cannot resolve its identifiers. */
export function interpretedCopy(prepared: SchemaNode | boolean, dialect: SchemaDialect): InterpretedSchema {
  const originals = new WeakMap<object, SchemaNode>();
  const falseSchemas = new WeakSet<object>();
  const formatChecks = new WeakMap<object, string>();
  const unknown = new Set(unknownTo[dialect]);

  const copy = (value: unknown): unknown => {
    if (value === false) {
      const never = { not: {} };
      falseSchemas.add(never);
      return never;
    }
    return isSchemaNode(value) ? copyNode(value) : value;
  };
  const copyNode = (node: SchemaNode): SchemaNode => {
    const result = mapSubschemas(node, copy);
    for (const keyword of unknown) delete result[keyword];
    if (node.nullable === true && node.type !== undefined) result.type = withNull(node.type);
    const check = typeof node.format === "string" ? numberFormats.get(node.format) : undefined;
    if (check !== undefined) {
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords.
      const entry = { if: { type: "number" }, then: check };
      formatChecks.set(entry, node.format as string);
      result.allOf = [...(Array.isArray(result.allOf) ? result.allOf : []), entry];
    }
    if (typeof node.$dynamicRef === "string") {
      result.$ref = node.$dynamicRef;
      delete result.$dynamicRef;
    }
    if (typeof node.$dynamicAnchor === "string" && node.$anchor === undefined) {
      result.$anchor = node.$dynamicAnchor;
      delete result.$dynamicAnchor;
    }
    originals.set(result, node);
    return result;
  };

  const root = typeof prepared === "boolean" ? prepared : (copyNode(prepared) as Schema);
  return { root, lookup: dereference(root), originals, falseSchemas, formatChecks };
}

function withNull(type: unknown): unknown {
  if (Array.isArray(type)) return type.includes("null") ? type : [...type, "null"];
  return type === "null" ? type : [type, "null"];
}
