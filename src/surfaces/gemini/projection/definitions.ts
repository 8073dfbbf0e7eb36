import { parsePointer } from "../../../schema/json-pointer.js";
import { breakRequiredCycles, definitionsOnCycles } from "./cycles.js";
import { buildDocument, SizeIndex } from "./in-place.js";
import type { Omissions } from "./omissions.js";
import type { SchemaNode } from "./render.js";
import type { RefTag } from "./shape-types.js";
import type { Reference, WrittenDefinitions } from "./written-definitions.js";

/**
 * The definitions of a `responseJsonSchema` projection. The writer refers to each definition
 * with a `$ref` and writes its projection once; `finish` then keeps a definition in `$defs` only
 * where that keeps the schema smaller than writing it in place (a definition used once, or
 * smaller than a `$ref` to it, is written in place), and keeps every definition on a cycle,
 * which cannot be written in place. Gemini unrolls a cycle only through a property the answer
 * may leave out, so a cycle that passes none is relaxed first (cycles.ts).
 */

/** The document root as a container and target of references: `#`, which no definition name can be. */
const root = "#";

/** Past this many definitions, only "all in place" and "all kept" are compared. */
const maxDefinitionsWeighed = 400;

/** Characters of wrappers that writing definitions in place may save, which the size estimate leaves out. */
const slack = 256;

export class Definitions {
  readonly #keys = new Map<string, string>();
  readonly #names = new Map<string, string>();
  readonly #bodies = new Map<string, SchemaNode>();
  readonly #references = new Map<SchemaNode, Reference>();
  readonly #wrappers = new Map<SchemaNode, Reference>();
  readonly #containers: string[] = [root];
  readonly #origins = new WeakMap<SchemaNode, string>();

  /** `rootKey`: the key of the definition the document root is, so that a reference to it is `#`. */
  constructor(
    readonly rootKey: string,
    readonly omissions: Omissions,
  ) {}

  /** A `$ref` node for the definition, whose body `writeBody` writes the first time it is met. */
  refer(tag: RefTag, writeBody: () => SchemaNode): SchemaNode {
    const container = this.#containers.at(-1) ?? root;
    if (tag.key === this.rootKey) return this.#record({ $ref: "#" }, root, container);
    let name = this.#names.get(tag.key);
    if (name === undefined) {
      name = this.#nameFor(tag.key);
      this.#names.set(tag.key, name);
      this.#keys.set(name, tag.key);
      this.#bodies.set(name, {});
      this.#containers.push(name);
      try {
        this.#bodies.set(name, writeBody());
      } finally {
        this.#containers.pop();
      }
    }
    return this.#record({ $ref: `#/$defs/${name}` }, name, container);
  }

  /** Whether `node` is a `$ref` this writer wrote (which takes no description beside it). */
  isReference(node: SchemaNode): boolean {
    return this.#references.has(node);
  }

  /** Notes that `wrapper` carries a description beside the reference `node`. */
  wrapped(node: SchemaNode, wrapper: SchemaNode): void {
    const reference = this.#references.get(node);
    if (reference === undefined) return;
    reference.wrapper = wrapper;
    this.#wrappers.set(wrapper, reference);
  }

  /** Notes where an object node was read from, for the omitted list. */
  located(node: SchemaNode, origin: string): void {
    this.#origins.set(node, origin);
  }

  /** The document: `body` with the definitions it keeps in `$defs`, the others written in place. */
  finish(body: SchemaNode): SchemaNode {
    if (this.#references.size === 0) return body;
    this.#bodies.set(root, body);
    this.#forgetUnwritten();
    const written: WrittenDefinitions = {
      root,
      names: [...this.#keys.keys()],
      bodies: this.#bodies,
      references: this.#references,
      wrappers: this.#wrappers,
      keyOf: (name) => (name === root ? this.rootKey : (this.#keys.get(name) ?? "")),
      originOf: (node) => this.#origins.get(node),
    };
    breakRequiredCycles(written, this.omissions);
    const onCycles = definitionsOnCycles(written);
    const movable = written.names.filter((name) => !onCycles.has(name));
    const sizes = new SizeIndex(written);
    const chosen = movable.length > maxDefinitionsWeighed ? new Set<string>() : sizes.chooseInPlace(movable);
    // Everything in place is the plainer form: it is taken unless it is larger (by more than the
    // descriptions merged in place can save), and it is never built when it would be.
    const allInPlace = new Set(movable);
    if (sizes.documentSize(allInPlace) > sizes.documentSize(chosen) + slack) return buildDocument(written, chosen);
    const plain = buildDocument(written, allInPlace);
    const weighed = buildDocument(written, chosen);
    return size(weighed) < size(plain) ? weighed : plain;
  }

  /** Drops the references of nodes the writer wrote and then left out (an alternative written twice). */
  #forgetUnwritten(): void {
    const written = new Set<unknown>();
    const visit = (value: unknown): void => {
      if (typeof value !== "object" || value === null) return;
      written.add(value);
      for (const member of Object.values(value)) visit(member);
    };
    for (const body of this.#bodies.values()) visit(body);
    for (const node of [...this.#references.keys()]) if (!written.has(node)) this.#references.delete(node);
  }

  #record(node: SchemaNode, target: string, container: string): SchemaNode {
    this.#references.set(node, { node, target, container });
    return node;
  }

  /** A name for `$defs`: the definition's own, where it has one, made safe for a `$ref` and unique. */
  #nameFor(key: string): string {
    const tokens = parsePointer(key) ?? [];
    const parent = tokens.at(-2);
    const wanted = parent === "$defs" || parent === "definitions" ? (tokens.at(-1) ?? "") : tokens.join("_");
    const base = wanted.replace(/[^A-Za-z0-9_.-]/g, "_") || "definition";
    let name = base;
    for (let suffix = 2; this.#keys.has(name); suffix += 1) name = `${base}_${suffix}`;
    return name;
  }
}

function size(value: unknown): number {
  return JSON.stringify(value).length;
}
