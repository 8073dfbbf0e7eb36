import { declaredTypes, isSchemaNode, pinnedValue, resolveLocalRef, type SchemaNode } from "./schema-nodes.js";

/**
 * How to read a union the instance does not select an alternative of: `all` takes every
 * alternative (to know every field name that may appear), `primary` the first object-like one
 * (to describe one concrete shape in a hint or an example).
 */
export type UnionReading = "all" | "primary";

/** A property whose one fixed value tells a union's alternatives apart. */
export interface Discriminator {
  readonly property: string;
  /** The value each alternative fixes, in alternative order. */
  readonly values: readonly unknown[];
  /** Whether every alternative requires the property. */
  readonly required: boolean;
}

/** What the schema says about one place in the answer. */
export interface Located {
  /** The instance path, with property names the schema does not know there masked as `*`. */
  readonly segments: readonly string[];
  readonly all: readonly SchemaNode[];
  readonly primary: readonly SchemaNode[];
  readonly instance: unknown;
}

const maxDepth = 32;

/** A node's references: `$ref`, and 2019-09's `$recursiveRef` (to the root, within one schema resource). */
function references(node: SchemaNode): string[] {
  return [node.$ref, node.$recursiveRef].filter((ref): ref is string => typeof ref === "string");
}

/** The nodes a schema node stands for through `$ref` and `allOf` (unions stay unions). */
export function flattenNode(node: unknown, root: unknown, out: SchemaNode[] = [], depth = 0): SchemaNode[] {
  if (!isSchemaNode(node) || depth > maxDepth || out.includes(node)) return out;
  out.push(node);
  for (const ref of references(node)) flattenNode(resolveLocalRef(root, ref), root, out, depth + 1);
  if (Array.isArray(node.allOf)) for (const part of node.allOf) flattenNode(part, root, out, depth + 1);
  return out;
}

/**
 * The discriminator of a union, found generically: a property that every alternative pins to
 * one scalar value (`const` or a one-value `enum`), each value different. A declared
 * `discriminator.propertyName` is tried alone; otherwise candidates go in sorted order.
 */
export function discriminatorOf(
  alternatives: readonly unknown[],
  root: unknown,
  declared?: string,
): Discriminator | undefined {
  const flattened = alternatives.map((alternative) => flattenNode(alternative, root));
  const first = flattened[0];
  if (first === undefined) return undefined;
  const names = first.flatMap((node) => (isSchemaNode(node.properties) ? Object.keys(node.properties) : []));
  const candidates = declared === undefined ? [...new Set(names)].sort() : [declared];
  for (const property of candidates) {
    const values: unknown[] = [];
    for (const nodes of flattened) {
      const pinned = nodes
        .flatMap((node) => flattenNode(isSchemaNode(node.properties) ? node.properties[property] : undefined, root))
        .map(pinnedValue)
        .find((value) => value !== undefined);
      if (pinned === undefined || (typeof pinned.value === "object" && pinned.value !== null)) break;
      values.push(pinned.value);
    }
    if (values.length === flattened.length && new Set(values).size === values.length) {
      const required = flattened.every((nodes) =>
        nodes.some((node) => Array.isArray(node.required) && node.required.includes(property)),
      );
      return { property, values, required };
    }
  }
  return undefined;
}

/** The declared `discriminator.propertyName` of a node, if any. */
export function declaredDiscriminator(node: SchemaNode): string | undefined {
  const discriminator = node.discriminator;
  return isSchemaNode(discriminator) && typeof discriminator.propertyName === "string"
    ? discriminator.propertyName
    : undefined;
}

/** The index of the alternative that the instance's discriminator value names, if any. */
export function selectedAlternative(
  node: SchemaNode,
  alternatives: readonly unknown[],
  instance: unknown,
  root: unknown,
): number | undefined {
  if (!isSchemaNode(instance)) return undefined;
  const discriminator = discriminatorOf(alternatives, root, declaredDiscriminator(node));
  if (discriminator === undefined || !Object.hasOwn(instance, discriminator.property)) return undefined;
  const index = discriminator.values.indexOf(instance[discriminator.property]);
  return index < 0 ? undefined : index;
}

/** Every schema node that applies to an instance at one place, through `$ref`, `allOf` and unions. */
export function applicableNodes(
  node: unknown,
  instance: unknown,
  root: unknown,
  reading: UnionReading,
  out: SchemaNode[] = [],
  depth = 0,
): SchemaNode[] {
  if (!isSchemaNode(node) || depth > maxDepth || out.includes(node)) return out;
  out.push(node);
  const next = (child: unknown) => applicableNodes(child, instance, root, reading, out, depth + 1);
  for (const ref of references(node)) next(resolveLocalRef(root, ref));
  if (Array.isArray(node.allOf)) node.allOf.forEach(next);
  for (const keyword of ["oneOf", "anyOf"]) {
    const alternatives = node[keyword];
    if (!Array.isArray(alternatives)) continue;
    const selected = selectedAlternative(node, alternatives, instance, root);
    if (selected !== undefined) next(alternatives[selected]);
    else if (reading === "all") alternatives.forEach(next);
    else next(alternatives.find((alternative) => isObjectLike(alternative, root)) ?? firstNotNull(alternatives, root));
  }
  if (reading === "all") {
    next(node.then);
    next(node.else);
  }
  return out;
}

/** Walks the answer and the schema together along an instance path. */
export function locate(root: unknown, data: unknown, path: readonly string[]): Located {
  let instance = data;
  let all = applicableNodes(root, instance, root, "all");
  let primary = applicableNodes(root, instance, root, "primary");
  const segments: string[] = [];
  for (const segment of path) {
    let children: (nodes: readonly SchemaNode[]) => unknown[];
    if (Array.isArray(instance) && /^\d+$/.test(segment)) {
      const index = Number(segment);
      segments.push(segment);
      children = (nodes) => nodes.flatMap((node) => itemSchemas(node, index));
      instance = instance[index];
    } else if (isSchemaNode(instance)) {
      const known = all.some((node) => isSchemaNode(node.properties) && Object.hasOwn(node.properties, segment));
      segments.push(known ? segment : "*");
      children = (nodes) => nodes.flatMap((node) => propertySchemas(node, segment));
      instance = Object.hasOwn(instance, segment) ? instance[segment] : undefined;
    } else {
      segments.push("*");
      children = () => [];
      instance = undefined;
    }
    const childInstance = instance;
    // Each node once: alternatives that lead to the same schema (a `$ref` chain of unions) would multiply the nodes
    // at every step down the path.
    all = [...new Set(children(all).flatMap((child) => applicableNodes(child, childInstance, root, "all")))];
    primary = [
      ...new Set(children(primary).flatMap((child) => applicableNodes(child, childInstance, root, "primary"))),
    ];
  }
  return { segments, all, primary, instance };
}

/** The property names the schema declares for an object at this place, sorted. */
export function knownFields(nodes: readonly SchemaNode[]): string[] {
  const names = nodes.flatMap((node) => (isSchemaNode(node.properties) ? Object.keys(node.properties) : []));
  return [...new Set(names)].sort();
}

function itemSchemas(node: SchemaNode, index: number): unknown[] {
  const { prefixItems, items, additionalItems } = node;
  if (Array.isArray(prefixItems)) return index < prefixItems.length ? [prefixItems[index]] : [items];
  if (Array.isArray(items)) return index < items.length ? [items[index]] : [additionalItems];
  return [items];
}

function propertySchemas(node: SchemaNode, name: string): unknown[] {
  const found: unknown[] = [];
  if (isSchemaNode(node.properties) && Object.hasOwn(node.properties, name)) found.push(node.properties[name]);
  if (isSchemaNode(node.patternProperties)) {
    for (const [pattern, schema] of Object.entries(node.patternProperties)) {
      if (matches(pattern, name)) found.push(schema);
    }
  }
  if (found.length === 0) found.push(node.additionalProperties, node.unevaluatedProperties);
  return found;
}

function matches(pattern: string, name: string): boolean {
  try {
    return new RegExp(pattern, "u").test(name);
  } catch {
    return false;
  }
}

function firstNotNull(alternatives: readonly unknown[], root: unknown): unknown {
  const onlyNull = (alternative: unknown) =>
    flattenNode(alternative, root).some((part) => declaredTypes(part).join() === "null");
  return alternatives.find((alternative) => !onlyNull(alternative)) ?? alternatives[0];
}

function isObjectLike(node: unknown, root: unknown): boolean {
  return flattenNode(node, root).some(
    (part) => isSchemaNode(part.properties) || declaredTypes(part).includes("object"),
  );
}
