import {
  annotationKeywords,
  isSchemaNode,
  resolveLocalRef,
  type SchemaNode,
  schemaListKeywords,
  schemaMapKeywords,
  schemaValueKeywords,
} from "./schema-nodes.js";

/** Keywords that scope identifiers; a pointer lookup cannot tell how they change `$ref`. */
const scopingKeywords = ["$anchor", "$dynamicAnchor", "$recursiveAnchor", "$dynamicRef", "$recursiveRef"];

/** Keywords beside a `$ref` that change nothing about what validates. */
const inertKeywords = new Set([...annotationKeywords, "$defs", "definitions", "$schema", "$id"]);

/** Inlining stops past this many schema nodes (a schema that reuses big definitions often). */
const nodeBudget = 20_000;

/**
 * Nor may it multiply the schema: a chain of unions whose alternatives all refer to the next link grows by their
 * number at every link (4 alternatives, 6 links: 4,096 copies of the last), and so would the time to compile it.
 * Real schemas grow by 3 times at most; this allows a fixed part and 8 times the nodes of the schema.
 */
const growthBudget = { base: 2_000, perNode: 8 };

class NotInlinable extends Error {}

/**
 * A copy of a schema with its same-document `$ref`s replaced by the schemas they point to, so
 * that every Ajv `schemaPath` is a path from the root and a union's alternatives can be told
 * apart by it. A `$ref` with validating siblings becomes an `allOf` entry (Ajv applies `$ref`
 * siblings in every draft, so this validates the same); recursive references stay references.
 * Returns undefined when the schema has nested identifiers or anchors (whose scoping a plain
 * pointer lookup would get wrong) or would grow past a fixed budget: compile it as it is then.
 */
export function inlineLocalRefs(schema: SchemaNode): SchemaNode | undefined {
  const rootId = typeof schema.$id === "string" ? schema.$id.replace(/#$/, "") : undefined;
  let budget = Math.min(nodeBudget, growthBudget.base + growthBudget.perNode * schemaNodes(schema));
  let foreignRefs = false;

  const localRef = (ref: string): string | undefined => {
    if (ref.startsWith("#")) return ref;
    if (rootId !== undefined && rootId !== "" && ref.startsWith(`${rootId}#`)) return ref.slice(rootId.length);
    foreignRefs = true;
    return undefined;
  };

  const inline = (node: unknown, stack: readonly unknown[]): unknown => {
    if (!isSchemaNode(node)) return node;
    budget -= 1;
    if (budget < 0) throw new NotInlinable();
    if ((node !== schema && "$id" in node) || scopingKeywords.some((keyword) => keyword in node)) {
      throw new NotInlinable();
    }
    const ref = typeof node.$ref === "string" ? localRef(node.$ref) : undefined;
    const target = ref === undefined ? undefined : resolveLocalRef(schema, ref);
    if (ref === undefined || target === undefined || stack.includes(target)) {
      const copy = inlineChildren(node, stack);
      if (ref !== undefined) copy.$ref = ref;
      return copy;
    }
    const inlinedTarget = inline(target, [...stack, target]);
    const { $ref: _ref, ...rest } = node;
    if (Object.keys(rest).every((keyword) => inertKeywords.has(keyword))) {
      return isSchemaNode(inlinedTarget) ? { ...inlinedTarget, ...rest } : inlinedTarget;
    }
    const copy = inlineChildren(rest, stack);
    copy.allOf = [...(Array.isArray(copy.allOf) ? copy.allOf : []), inlinedTarget];
    return copy;
  };

  const inlineChildren = (node: SchemaNode, stack: readonly unknown[]): SchemaNode => {
    const copy: SchemaNode = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (keyword === "$defs" || keyword === "definitions") {
        copy[keyword] = value; // only reached through references, which are inlined or kept as they are
      } else if (schemaMapKeywords.includes(keyword) && isSchemaNode(value)) {
        copy[keyword] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, inline(child, stack)]));
      } else if (schemaListKeywords.includes(keyword) && Array.isArray(value)) {
        copy[keyword] = value.map((child) => inline(child, stack));
      } else if (schemaValueKeywords.includes(keyword)) {
        copy[keyword] = inline(value, stack);
      } else {
        copy[keyword] = value;
      }
    }
    return copy;
  };

  try {
    const inlined = inline(schema, [schema]);
    if (!isSchemaNode(inlined)) return undefined;
    // Without references left that are relative to it, the root's `$id` only risks a clash in a shared Ajv.
    if (!foreignRefs) delete inlined.$id;
    return inlined;
  } catch (error) {
    if (error instanceof NotInlinable) return undefined;
    throw error;
  }
}

/** The objects and arrays of a schema, itself included; walked without recursion. */
function schemaNodes(schema: SchemaNode): number {
  let count = 0;
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== "object" || node === null) continue;
    count += 1;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push(child);
  }
  return count;
}
