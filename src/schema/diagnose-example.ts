import { applicableNodes } from "./diagnose-path.js";
import { declaredTypes, isSchemaNode, pinnedValue, type SchemaNode } from "./schema-nodes.js";

/** Objects nested deeper than this below the reported one are shown as `{}` (arrays as `[]`). */
const maxDepth = 4;

const ellipsis = "…";

/** The property names an object example or hint lists: the required ones, or else all declared ones. */
export function objectFieldOrder(nodes: readonly SchemaNode[]): string[] {
  const required = nodes.flatMap((node) => (Array.isArray(node.required) ? node.required : []));
  const names = required.filter((name): name is string => typeof name === "string");
  return names.length > 0 ? [...new Set(names)] : declaredPropertyNames(nodes);
}

/** Every property name the nodes declare, in declaration order. */
export function declaredPropertyNames(nodes: readonly SchemaNode[]): string[] {
  return [...declaredProperties(nodes).keys()];
}

/**
 * An illustrative object for the schema nodes of one place, built from the schema alone:
 * strings take their `examples[0]`, `const` or first `enum` value, else "…"; numbers their
 * minimum or 0; booleans false; arrays one item; nested objects recurse to a bounded depth.
 */
export function exampleObject(nodes: readonly SchemaNode[], root: unknown, depth = 0): Record<string, unknown> {
  const properties = declaredProperties(nodes);
  const example: Record<string, unknown> = {};
  for (const name of objectFieldOrder(nodes)) {
    example[name] = depth >= maxDepth ? ellipsis : placeholder(properties.get(name), root, depth + 1);
  }
  return example;
}

function declaredProperties(nodes: readonly SchemaNode[]): Map<string, unknown> {
  const properties = new Map<string, unknown>();
  for (const node of nodes) {
    if (!isSchemaNode(node.properties)) continue;
    for (const [name, schema] of Object.entries(node.properties)) {
      if (!properties.has(name)) properties.set(name, schema);
    }
  }
  return properties;
}

function placeholder(schema: unknown, root: unknown, depth: number): unknown {
  const nodes = applicableNodes(schema, undefined, root, "primary");
  const types = nodes.flatMap(declaredTypes);
  const type = types.find((item) => item !== "null") ?? types[0] ?? inferredType(nodes);
  const pinned = nodes.map(pinnedOrFirstEnum).find((value) => value !== undefined);
  if (type === "string" || type === undefined) {
    const example = nodes.map(firstStringExample).find((value) => value !== undefined);
    return example ?? pinned?.value ?? ellipsis;
  }
  if (pinned !== undefined) return pinned.value;
  switch (type) {
    case "number":
    case "integer":
      return numberPlaceholder(nodes, type);
    case "boolean":
      return false;
    case "null":
      return null;
    case "array":
      return depth >= maxDepth ? [] : arrayPlaceholder(nodes, root, depth);
    default:
      return depth >= maxDepth ? {} : exampleObject(nodes, root, depth);
  }
}

function inferredType(nodes: readonly SchemaNode[]): string | undefined {
  if (nodes.some((node) => isSchemaNode(node.properties))) return "object";
  if (nodes.some((node) => node.items !== undefined || node.prefixItems !== undefined)) return "array";
  return undefined;
}

function pinnedOrFirstEnum(node: SchemaNode): { value: unknown } | undefined {
  const pinned = pinnedValue(node);
  if (pinned !== undefined) return pinned;
  return Array.isArray(node.enum) && node.enum.length > 0 ? { value: node.enum[0] } : undefined;
}

function firstStringExample(node: SchemaNode): string | undefined {
  const example = Array.isArray(node.examples) ? node.examples[0] : node.example;
  return typeof example === "string" ? example : undefined;
}

function numberPlaceholder(nodes: readonly SchemaNode[], type: string): number {
  const bound = (keyword: string) => nodes.map((node) => node[keyword]).find((value) => typeof value === "number");
  const minimum = bound("minimum");
  const exclusiveMinimum = bound("exclusiveMinimum");
  const maximum = bound("maximum");
  let value = minimum ?? (exclusiveMinimum === undefined ? 0 : exclusiveMinimum + 1);
  if (type === "integer") value = Math.ceil(value);
  return maximum !== undefined && value > maximum ? maximum : value;
}

function arrayPlaceholder(nodes: readonly SchemaNode[], root: unknown, depth: number): unknown[] {
  if (nodes.some((node) => node.maxItems === 0)) return [];
  const examples = nodes.map((node) => (Array.isArray(node.examples) ? node.examples[0] : undefined));
  const arrayExample = examples.find((example) => Array.isArray(example) && example.length > 0);
  if (Array.isArray(arrayExample)) return arrayExample.slice(0, 1);
  for (const node of nodes) {
    const item = Array.isArray(node.prefixItems)
      ? node.prefixItems[0]
      : Array.isArray(node.items)
        ? node.items[0]
        : node.items;
    if (item !== undefined && item !== false) return [placeholder(item, root, depth + 1)];
  }
  return [];
}
