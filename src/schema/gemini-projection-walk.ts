import { invalidRequest } from "../errors/gateway-error.js";
import type { Omissions } from "./gemini-projection-omissions.js";
import { innerBase, isSchemaObject, type RefIndex } from "./gemini-projection-refs.js";
import {
  intersect,
  type JsonType,
  jsonTypes,
  normalize,
  type Projected,
  type Shape,
  unite,
} from "./gemini-projection-shape.js";
import { escapePointerToken } from "./json-pointer.js";

/**
 * Reads a full JSON Schema into a {@link Shape} tree: `$ref`s inlined (recursion cut after a
 * few expansions), `allOf` intersected, `anyOf`/`oneOf` reduced to their common shape, and
 * every keyword the projection does not keep recorded in the omitted list.
 */

type SchemaObject = Record<string, unknown>;

export interface WalkContext {
  index: RefIndex;
  omissions: Omissions;
  /** The request field reported in a 400. */
  param: string;
}

/** How often one `$ref` may be expanded inside itself before the node is left open. */
export const maxRefExpansions = 3;

/** Schema nodes one projection may read; a bigger (or exploding) schema is refused. */
const maxNodes = 10_000;

const messages = {
  notASchema: "The response schema contains a value where a schema (an object or a boolean) is required.",
  tooLarge: "The response schema is too large to project for Gemini.",
};

const jsonTypeNames: ReadonlySet<string> = new Set(jsonTypes);

/** Keywords the shape keeps or resolves completely; every other keyword is listed as omitted. */
const keptKeywords = new Set([
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "items",
  "description",
  "propertyOrdering",
  "nullable",
  "$ref",
  "allOf",
  "anyOf",
  "oneOf",
  "$defs",
  "definitions",
]);

/** Projects a whole document. */
export function walkSchema(schema: unknown, context: WalkContext): Projected {
  const walker = new Walker(context);
  return walker.walk(schema, "", 0, context.index.rootBase);
}

class Walker {
  readonly #expansions = new Map<object, number>();
  #nodes = 0;

  constructor(readonly context: WalkContext) {}

  /** `depth` counts object and array levels, which the outer projection uses to drop deep entries. */
  walk(node: unknown, location: string, depth: number, outerBase: string): Projected {
    if (node === true) return { origin: location };
    if (node === false) return this.#nothing(location, depth);
    if (!isSchemaObject(node)) throw invalidRequest(messages.notASchema, this.context.param);
    this.#nodes += 1;
    if (this.#nodes > maxNodes) throw invalidRequest(messages.tooLarge, this.context.param);
    const base = innerBase(node, outerBase);
    let result = this.#ownShape(node, location, depth, base);
    // Ajv 8 applies the keywords beside a `$ref` in every draft, so they narrow its target.
    if (typeof node.$ref === "string") result = intersect(result, this.#followRef(node.$ref, location, depth, base));
    if (Array.isArray(node.allOf)) {
      node.allOf.forEach((branch, index) => {
        result = intersect(result, this.walk(branch, `${location}/allOf/${index}`, depth, base));
      });
    } else if ("allOf" in node) this.#omit(location, depth, "allOf");
    for (const keyword of ["anyOf", "oneOf"] as const) {
      if (keyword in node) result = intersect(result, this.#commonShape(node, keyword, location, depth, base));
    }
    return result === false ? this.#nothing(location, depth) : result;
  }

  #ownShape(node: SchemaObject, location: string, depth: number, base: string): Projected {
    const shape: Shape = { origin: location };
    for (const [keyword, value] of Object.entries(node)) {
      if (!keptKeywords.has(keyword) || !this.#keep(shape, keyword, value, location, depth, base)) {
        this.#omit(location, depth, keyword);
      }
    }
    if ("const" in node) shape.enum = [structuredClone(node.const)];
    if (node.nullable === true && shape.types && !shape.types.includes("null")) shape.types = [...shape.types, "null"];
    // A schema-valued `additionalProperties` is left open: only `false` sharpens the common shape.
    if (node.additionalProperties === false && !("patternProperties" in node)) shape.additional = false;
    const items = this.#items(node, location, depth, base);
    if (items !== undefined) shape.items = items;
    return normalize(shape);
  }

  /** Copies one kept keyword into the shape; false when its value is malformed (then it is listed). */
  #keep(shape: Shape, keyword: string, value: unknown, location: string, depth: number, base: string): boolean {
    switch (keyword) {
      case "type": {
        const types = parseTypes(value);
        if (types) shape.types = types;
        return types !== undefined;
      }
      case "enum":
        if (!Array.isArray(value)) return false;
        shape.enum = value.map((item) => structuredClone(item));
        return true;
      case "properties":
        if (!isSchemaObject(value)) return false;
        shape.properties = new Map(
          Object.entries(value).map(([name, child]) => [
            name,
            this.walk(child, `${location}/properties/${escapePointerToken(name)}`, depth + 1, base),
          ]),
        );
        return true;
      case "required":
        if (!isStringList(value)) return false;
        shape.required = [...new Set(value)];
        return true;
      case "items":
        // Read by #items; the draft-07 tuple form (an array) is only reduced, so it is listed.
        return !Array.isArray(value);
      case "description":
        if (typeof value !== "string") return false;
        shape.description = value;
        return true;
      case "propertyOrdering":
        if (!isStringList(value)) return false;
        shape.propertyOrdering = [...value];
        return true;
      case "nullable":
        return typeof value === "boolean";
      case "$ref":
        return typeof value === "string";
      default:
        // const, allOf, anyOf, oneOf, $defs, definitions: handled by walk() and #ownShape().
        return true;
    }
  }

  /**
   * The item shape. Positional items (`prefixItems`, or draft-07 `items` as an array) become
   * one item shape that accepts any of them and whatever may follow them.
   */
  #items(node: SchemaObject, location: string, depth: number, base: string): Projected | undefined {
    const positional = Array.isArray(node.prefixItems)
      ? { keyword: "prefixItems", list: node.prefixItems, restKeyword: "items" }
      : Array.isArray(node.items)
        ? { keyword: "items", list: node.items, restKeyword: "additionalItems" }
        : undefined;
    if (positional === undefined) {
      return node.items === undefined ? undefined : this.walk(node.items, `${location}/items`, depth + 1, base);
    }
    const rest = node[positional.restKeyword];
    if (rest === undefined || rest === true) return undefined;
    let items: Projected =
      rest === false ? false : this.walk(rest, `${location}/${positional.restKeyword}`, depth + 1, base);
    positional.list.forEach((position: unknown, index) => {
      items = unite(items, this.walk(position, `${location}/${positional.keyword}/${index}`, depth + 1, base));
    });
    return items;
  }

  #followRef(ref: string, location: string, depth: number, base: string): Projected {
    const target = this.context.index.resolve(ref, base);
    if (!isSchemaObject(target.node)) return this.walk(target.node, target.location, depth, target.base);
    const expansions = this.#expansions.get(target.node) ?? 0;
    if (expansions >= maxRefExpansions) {
      this.#omit(location, depth, `recursive $ref left open after ${maxRefExpansions} expansions`);
      return openRecursion(target.node, location);
    }
    this.#expansions.set(target.node, expansions + 1);
    try {
      return this.walk(target.node, target.location, depth, target.base);
    } finally {
      this.#expansions.set(target.node, expansions);
    }
  }

  /**
   * `anyOf`/`oneOf` as one node that accepts what any alternative accepts. Mixed alternatives
   * (an object or a string, say) keep each type's structure side by side, which JSON Schema
   * applies per type; `[T, null]` is simply a nullable T.
   */
  #commonShape(
    node: SchemaObject,
    keyword: "anyOf" | "oneOf",
    location: string,
    depth: number,
    base: string,
  ): Projected {
    const alternatives = node[keyword];
    if (!Array.isArray(alternatives) || alternatives.length === 0) {
      this.#omit(location, depth, keyword);
      return { origin: location };
    }
    const projected = alternatives.map((alternative, index) =>
      this.walk(alternative, `${location}/${keyword}/${index}`, depth, base),
    );
    const substantive = projected.filter((shape) => shape !== false && !isNullOnly(shape));
    if (substantive.length > 1) this.#omit(location, depth, `${keyword} reduced to common shape`);
    return projected.reduce<Projected>((common, shape) => unite(common, shape), false);
  }

  #nothing(location: string, depth: number): false {
    this.#omit(location, depth, "matches no instance");
    return false;
  }

  #omit(location: string, depth: number, what: string): void {
    this.context.omissions.add(location, depth, what);
  }
}

/**
 * A recursion cut short: it keeps only the `type` the target declares, so it is as open as
 * `{}` for any instance the target could accept.
 */
function openRecursion(target: SchemaObject, location: string): Shape {
  const types = parseTypes(target.type);
  if (types === undefined) return { origin: location };
  if (target.nullable === true && !types.includes("null")) types.push("null");
  return { origin: location, types };
}

function parseTypes(value: unknown): JsonType[] | undefined {
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  if (!list.every(isJsonType)) return undefined;
  return [...new Set(list)];
}

function isJsonType(value: unknown): value is JsonType {
  return typeof value === "string" && jsonTypeNames.has(value);
}

function isNullOnly(shape: Shape): boolean {
  return shape.types?.length === 1 && shape.types[0] === "null";
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}
