import { canonicalJson } from "../../../json/canonical-json.js";
import { Definitions } from "./definitions.js";
import type { Omissions } from "./omissions.js";
import { isScalar, objectPart, type SchemaNode } from "./render.js";
import { acceptsType } from "./shape.js";
import type { Projected, RefTag, Shape } from "./shape-types.js";
import type { JsonType } from "./values.js";

/**
 * Writes a projected shape as the JSON Schema subset `responseJsonSchema` takes: lowercase types,
 * type arrays for unions and nullability, scalar enums, `anyOf` for kept alternatives,
 * `additionalProperties` for maps and, with `references`, a `$ref` for each expansion of a
 * definition, whose projection is written once in `$defs` (definitions.ts
 * decides which of them are written in place after all). A node is left open rather than made
 * stricter.
 */
export function renderJsonSchema(shape: Projected, omissions: Omissions, references: boolean): SchemaNode {
  if (shape === false) return {};
  if (!references) return new JsonSchemaWriter(omissions, undefined).content(shape);
  // A document root that is only a reference is that definition: references to it become `#`.
  const definitions = new Definitions(shape.ref?.key ?? "", omissions);
  return definitions.finish(new JsonSchemaWriter(omissions, definitions).content(shape));
}

class JsonSchemaWriter {
  constructor(
    readonly omissions: Omissions,
    readonly definitions: Definitions | undefined,
  ) {}

  write(shape: Projected): SchemaNode {
    if (shape === false) return {};
    if (shape.ref !== undefined && this.definitions !== undefined) return this.#reference(shape, shape.ref);
    return this.content(shape);
  }

  /** The node itself, whether or not it stands for a definition. */
  content(shape: Shape): SchemaNode {
    const node: SchemaNode = {};
    if (shape.cut !== undefined) this.omissions.add(shape.origin, 0, shape.cut);
    if (shape.anyOf) return this.#alternatives(shape, shape.anyOf);
    const values = shape.enum?.every(isScalar) ? shape.enum : undefined;
    if (shape.enum && values === undefined) this.omissions.add(shape.origin, 0, "enum (object or array values)");
    if (shape.types && !(values && mixedTypes(shape.types))) {
      node.type = shape.types.length === 1 ? shape.types[0] : [...shape.types];
    }
    if (shape.description !== undefined) node.description = shape.description;
    if (values && !listsEveryValue(shape.types, values)) node.enum = values.map((value) => structuredClone(value));
    if (acceptsType(shape, "object")) {
      const write = (child: Projected) => this.write(child);
      Object.assign(node, objectPart(shape, this.omissions, write));
      // `false` only ever narrows merged shapes; a map's value schema is what Gemini may emit for its entries.
      if (shape.additional !== undefined && shape.additional !== false) {
        node.additionalProperties = this.write(shape.additional);
      }
      this.definitions?.located(node, shape.origin);
    }
    if (acceptsType(shape, "array") && shape.items !== undefined && shape.items !== false) {
      node.items = this.write(shape.items);
    }
    return node;
  }

  /** An `anyOf`, each alternative once: alternatives may differ only in what the projection leaves out. */
  #alternatives(shape: Shape, alternatives: readonly Shape[]): SchemaNode {
    const written = new Map<string, SchemaNode>();
    for (const alternative of alternatives) {
      const node = this.write(alternative);
      const key = canonicalJson(node);
      if (!written.has(key)) written.set(key, node);
    }
    const [only, ...others] = written.values();
    if (only !== undefined && others.length === 0) {
      if (shape.description === undefined) return only;
      // A node just written, shared with nothing: it takes the description itself.
      if (this.definitions?.isReference(only) !== true) return Object.assign(only, { description: shape.description });
    }
    const node: SchemaNode = {};
    if (shape.description !== undefined) node.description = shape.description;
    node.anyOf = [...written.values()];
    if (only !== undefined && others.length === 0) this.definitions?.wrapped(only, node);
    return node;
  }

  /**
   * A `$ref` to the definition. Gemini takes no keyword beside a `$ref` but `$`-prefixed ones, so a
   * description of the referring node that differs from the definition's wraps it in a one-branch `anyOf`.
   */
  #reference(shape: Shape, tag: RefTag): SchemaNode {
    const definitions = this.definitions!;
    const reference = definitions.refer(tag, () => this.content(tag.definition));
    if (shape.description === undefined || shape.description === tag.definition.description) return reference;
    const wrapper: SchemaNode = { description: shape.description, anyOf: [reference] };
    definitions.wrapped(reference, wrapper);
    return wrapper;
  }
}

/**
 * Whether an enum's values have several types besides null. The `type` beside such an enum adds
 * nothing in JSON Schema and is left out: Gemini's documented `enum` holds values of one type.
 */
function mixedTypes(types: readonly JsonType[]): boolean {
  return types.filter((type) => type !== "null").length > 1;
}

/** Whether the values are every value the types have (`[null]` for null), so the enum adds nothing. */
function listsEveryValue(types: readonly JsonType[] | undefined, values: readonly unknown[]): boolean {
  if (types === undefined) return false;
  return types.every((type) =>
    type === "null" ? values.includes(null) : type === "boolean" && values.includes(true) && values.includes(false),
  );
}
