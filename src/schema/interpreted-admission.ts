import type { Schema } from "@cfworker/json-schema";
import type { InterpretedSchema } from "./interpreted-copy.js";
import { isSchemaNode, type SchemaNode } from "./schema-nodes.js";
import { forEachReachableNode } from "./schema-walk.js";

/** The target of a node's `$ref` (or `$recursiveRef`) in the copy, as the interpretive validator resolves it. */
export function resolveIn(schema: InterpretedSchema): (node: SchemaNode) => unknown {
  return (node) => {
    const { __absolute_ref__: ref, __absolute_recursive_ref__: recursive } = node as Schema;
    return schema.lookup[ref ?? recursive ?? ""];
  };
}

/**
 * What Ajv refuses when it compiles, beyond its meta-schema, on every node it reaches (those are the ones it
 * compiles): a reference it cannot resolve, an empty `enum`, `nullable` without `type`, a `pattern` (or a
 * `patternProperties` name) that is no regular expression with the `u` flag, and the draft-04 keyword `id`.
 */
export function ajvWouldCompile(schema: InterpretedSchema): boolean {
  let compiles = true;
  const resolve = resolveIn(schema);
  forEachReachableNode(schema.root, resolve, (node) => {
    if (typeof node.$ref === "string" || typeof node.$recursiveRef === "string") {
      compiles &&= resolve(node) !== undefined;
    }
    const original = schema.originals.get(node);
    if (original === undefined) return;
    compiles &&=
      !Object.hasOwn(original, "id") &&
      !(Array.isArray(original.enum) && original.enum.length === 0) &&
      !(original.nullable === true && original.type === undefined) &&
      (typeof original.pattern !== "string" || isRegExp(original.pattern)) &&
      (!isSchemaNode(original.patternProperties) || Object.keys(original.patternProperties).every(isRegExp));
  });
  return compiles;
}

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}
