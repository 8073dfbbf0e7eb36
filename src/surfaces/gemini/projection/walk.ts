import { invalidRequest } from "../../../errors/gateway-error.js";
import { escapePointerToken } from "../../../schema/json-pointer.js";
import { innerBase, isSchemaObject, type RefIndex } from "../../../schema/schema-refs.js";
import { mapValues } from "./maps.js";
import type { Omissions } from "./omissions.js";
import { alternativesOf, commonShapeOf, intersect, normalize, unite } from "./shape.js";
import type { Projected, RefTag, Shape } from "./shape-types.js";
import { isStringList, parseTypes } from "./values.js";
import { weightOf } from "./weight.js";

/**
 * Reads a full JSON Schema into a {@link Shape} tree: `$ref`s expanded (recursion cut after a
 * few expansions) and each expansion tagged with its definition so that a writer may refer to
 * it instead, `allOf` intersected, `anyOf`/`oneOf` kept as alternatives or reduced to their
 * common shape, and every keyword the projection does not keep recorded in the omitted list.
 */

type SchemaObject = Record<string, unknown>;

/**
 * `common-shape`: an `anyOf`/`oneOf` of several alternatives becomes one node that accepts what
 * any of them accepts. `any-of`: the alternatives are kept, for a target that enforces `anyOf`.
 */
export type UnionProjection = "common-shape" | "any-of";

export interface WalkContext {
  index: RefIndex;
  omissions: Omissions;
  /** The request field reported in a 400. */
  param: string;
  unions: UnionProjection;
  /** Whether the target takes `additionalProperties`, so that maps keep their value schema. */
  maps: boolean;
  /**
   * Whether the writer refers to definitions: each definition is then read once, a recursive
   * reference is a reference rather than an expansion, and a nullable reference stays `anyOf`
   * [reference, null].
   */
  references: boolean;
}

/** How often one `$ref` may be expanded inside itself before the node is left open. */
export const maxRefExpansions = 3;

/** Schema nodes one projection may read; a bigger (or exploding) schema is refused. */
const maxNodes = 10_000;

const messages = {
  notASchema: "The response schema contains a value where a schema (an object or a boolean) is required.",
  tooLarge: "The response schema is too large to project for Gemini.",
};

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
  /** With `references`: each definition's tagged projection, and the tags of those being read. */
  readonly #definitions = new Map<object, Projected>();
  readonly #reading = new Map<object, RefTag>();
  readonly #weights = new WeakMap<Shape, number>();
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
    if (typeof node.$ref === "string") {
      result = this.#meet(result, this.#followRef(node.$ref, location, depth, base), location, depth);
    }
    if (Array.isArray(node.allOf)) {
      node.allOf.forEach((branch, index) => {
        result = this.#meet(result, this.walk(branch, `${location}/allOf/${index}`, depth, base), location, depth);
      });
    } else if ("allOf" in node) this.#omit(location, depth, "allOf");
    for (const keyword of ["anyOf", "oneOf"] as const) {
      if (keyword in node) {
        result = this.#meet(result, this.#commonShape(node, keyword, location, depth, base), location, depth);
      }
    }
    return result === false ? this.#nothing(location, depth) : result;
  }

  /**
   * The intersection of two parts of a node. Kept alternatives take what applies beside them into
   * each of them. Where what that adds to them outweighs the two parts as written (a large shared
   * object beside alternatives that only add `required`, say), they become their common shape.
   */
  #meet(a: Projected, b: Projected, location: string, depth: number): Projected {
    const met = intersect(a, b);
    if (met === false || met.anyOf === undefined || this.context.unions !== "any-of") return met;
    const [weightA, weightB] = [weightOf(a, this.#weights), weightOf(b, this.#weights)];
    const [unionA, unionB] = [a !== false && a.anyOf !== undefined, b !== false && b.anyOf !== undefined];
    const alternatives = unionA && unionB ? Math.max(weightA, weightB) : unionA ? weightA : weightB;
    if (weightOf(met, this.#weights) - alternatives <= weightA + weightB) return met;
    this.#omit(location, depth, "alternatives reduced to common shape (what applies beside them would repeat in each)");
    return intersect(commonShapeOf(a), commonShapeOf(b));
  }

  #ownShape(node: SchemaObject, location: string, depth: number, base: string): Projected {
    const shape: Shape = { origin: location };
    let mapRead = false;
    for (const [keyword, value] of Object.entries(node)) {
      if (keyword === "additionalProperties" || keyword === "patternProperties") {
        // Both keywords make one rule for the other properties, read where the first of them stands.
        if (!mapRead) this.#readMap(shape, node, location, depth, base);
        mapRead = true;
      } else if (!keptKeywords.has(keyword) || !this.#keep(shape, keyword, value, location, depth, base)) {
        this.#omit(location, depth, keyword);
      }
    }
    if ("const" in node) shape.enum = [structuredClone(node.const)];
    if (node.nullable === true && shape.types && !shape.types.includes("null")) shape.types = [...shape.types, "null"];
    const items = this.#items(node, location, depth, base);
    if (items !== undefined) shape.items = items;
    return normalize(shape);
  }

  #readMap(shape: Shape, node: SchemaObject, location: string, depth: number, base: string): void {
    const additional = mapValues(node, {
      keep: this.context.maps,
      location,
      walk: (value, keyword) => this.walk(value, `${location}/${keyword}`, depth + 1, base),
      unite: (values) => this.#union(location, values),
      omit: (what) => this.#omit(location, depth, what),
    });
    if (additional !== undefined) shape.additional = additional;
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

  /**
   * The target's projection, tagged with the target so that a writer can refer to it rather than
   * repeat it. A projection that already stands for another definition (the target is only a
   * `$ref` itself) keeps that tag.
   */
  #followRef(ref: string, location: string, depth: number, base: string): Projected {
    const target = this.context.index.resolve(ref, base);
    if (!isSchemaObject(target.node)) return this.walk(target.node, target.location, depth, target.base);
    if (this.context.references) return this.#definition(target.node, target.location, target.base, location, depth);
    const expansions = this.#expansions.get(target.node) ?? 0;
    if (expansions >= maxRefExpansions) {
      // Listed by the writer, which does not reach this node when it refers to the definition instead.
      return openRecursion(target.node, location);
    }
    this.#expansions.set(target.node, expansions + 1);
    let projected: Projected;
    try {
      projected = this.walk(target.node, target.location, depth, target.base);
    } finally {
      this.#expansions.set(target.node, expansions);
    }
    if (projected === false || projected.ref !== undefined) return projected;
    return { ...projected, ref: { key: target.location, definition: projected } };
  }

  /**
   * A definition read once, for a writer that refers to it. A reference back into a definition
   * still being read is a reference to it whose own content is open: it is written as a `$ref`,
   * and only where keywords beside it must be merged into it is it left open (and listed).
   */
  #definition(node: SchemaObject, key: string, base: string, location: string, depth: number): Projected {
    const known = this.#definitions.get(node);
    if (known !== undefined) return known;
    const reading = this.#reading.get(node);
    if (reading !== undefined) {
      return { origin: location, ref: reading, cut: "recursive $ref left open where keywords beside it apply" };
    }
    const tag: RefTag = { key, definition: { origin: key } };
    this.#reading.set(node, tag);
    let projected: Projected;
    try {
      projected = this.walk(node, key, depth, base);
    } finally {
      this.#reading.delete(node);
    }
    let tagged: Projected = projected;
    if (projected !== false) {
      // References read while this one was open share its tag, whose definition is only now known.
      Object.assign(tag.definition, projected.ref?.definition ?? projected);
      if (projected.ref === undefined) tagged = { ...projected, ref: tag };
    }
    this.#definitions.set(node, tagged);
    return tagged;
  }

  /**
   * `anyOf`/`oneOf`. Under `any-of`, several alternatives stay alternatives. Otherwise, and for
   * `[T, null]` (simply a nullable T), one node accepts what any alternative accepts: mixed
   * alternatives (an object or a string, say) keep each type's structure side by side, which
   * JSON Schema applies per type.
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
    const substantive = projected.filter((shape): shape is Shape => shape !== false && !isNullOnly(shape));
    const [only] = substantive;
    if (substantive.length > 1 && this.context.unions === "any-of") {
      if (keyword === "oneOf") {
        this.#omit(location, depth, "oneOf kept as anyOf (that only one alternative matches is checked locally)");
      }
      return alternativesOf(location, projected);
    }
    if (substantive.length > 1) this.#omit(location, depth, `${keyword} reduced to common shape`);
    // A nullable reference stays a reference: merging null into it would write the definition in place.
    if (substantive.length === 1 && this.context.references && (only?.ref !== undefined || only?.anyOf !== undefined)) {
      return alternativesOf(location, projected);
    }
    return projected.reduce<Projected>((common, shape) => unite(common, shape), false);
  }

  /** What any of `values` accepts: alternatives under `any-of`, else their common shape. */
  #union(location: string, values: readonly Projected[]): Projected {
    if (this.context.unions === "any-of") return alternativesOf(location, values);
    return values.reduce<Projected>((common, shape) => unite(common, shape), false);
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
  const cut = `recursive $ref left open after ${maxRefExpansions} expansions`;
  const types = parseTypes(target.type);
  if (types === undefined) return { origin: location, cut };
  if (target.nullable === true && !types.includes("null")) types.push("null");
  return { origin: location, types, cut };
}

function isNullOnly(shape: Shape): boolean {
  return shape.types?.length === 1 && shape.types[0] === "null";
}
