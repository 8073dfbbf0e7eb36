import type { SchemaNode } from "./render.js";
import type { Reference, WrittenDefinitions } from "./written-definitions.js";

/** Which written definitions go in place of their references, and the document that makes. */

/**
 * The written definitions indexed for sizing: each body's own size (as compact JSON characters)
 * and its references by body and by target. Sizes for a choice of definitions in place are
 * computed from these, without writing anything: with everything in place, a document may be
 * exponentially larger than the one written.
 */
export class SizeIndex {
  readonly own: ReadonlyMap<string, number>;
  readonly byContainer = new Map<string, Reference[]>();
  readonly byTarget = new Map<string, Reference[]>();

  constructor(readonly written: WrittenDefinitions) {
    this.own = new Map([...written.bodies].map(([name, body]) => [name, JSON.stringify(body).length]));
    for (const reference of written.references.values()) {
      if (reference.cut === true) continue;
      this.byContainer.set(reference.container, [...(this.byContainer.get(reference.container) ?? []), reference]);
      this.byTarget.set(reference.target, [...(this.byTarget.get(reference.target) ?? []), reference]);
    }
  }

  /** The estimated size of the document with the definitions in `inPlace` written in place. */
  documentSize(inPlace: ReadonlySet<string>): number {
    return new Sizes(this, inPlace).document();
  }

  /**
   * Definitions to write in place, chosen greedily: each step moves the one that saves the most
   * characters (its `$defs` entry against uses × (its size − a `$ref`'s)), while one saves any.
   * `movable` must hold no definition on a cycle.
   */
  chooseInPlace(movable: readonly string[]): Set<string> {
    const inPlace = new Set<string>();
    for (;;) {
      const sizes = new Sizes(this, inPlace);
      let best: { name: string; saving: number } | undefined;
      for (const name of movable) {
        if (inPlace.has(name)) continue;
        const saving = sizes.entry(name) - sizes.uses(name) * (sizes.of(name) - referenceSize(name));
        if (saving >= 0 && (best === undefined || saving > best.saving)) best = { name, saving };
      }
      if (best === undefined) return inPlace;
      inPlace.add(best.name);
    }
  }
}

/** Sizes for one choice of definitions written in place. */
class Sizes {
  readonly #sizes = new Map<string, number>();
  readonly #uses = new Map<string, number>();

  constructor(
    readonly index: SizeIndex,
    readonly inPlace: ReadonlySet<string>,
  ) {}

  /** A body's size with the definitions in place written into it. */
  of(name: string): number {
    const known = this.#sizes.get(name);
    if (known !== undefined) return known;
    let total = this.index.own.get(name) ?? 0;
    for (const { target } of this.index.byContainer.get(name) ?? []) {
      if (this.inPlace.has(target)) total += this.of(target) - referenceSize(target);
    }
    this.#sizes.set(name, total);
    return total;
  }

  /** How often a definition is referred to; a use inside a definition in place counts for each use of that one. */
  uses(name: string): number {
    const known = this.#uses.get(name);
    if (known !== undefined) return known;
    let total = 0;
    for (const { container } of this.index.byTarget.get(name) ?? []) {
      total += this.inPlace.has(container) ? this.uses(container) : 1;
    }
    this.#uses.set(name, total);
    return total;
  }

  /** A definition's `$defs` entry: `"name":body,`. */
  entry(name: string): number {
    return JSON.stringify(name).length + this.of(name) + 2;
  }

  /** The whole document's size, `$defs` included, but for descriptions merged in place. */
  document(): number {
    const { written } = this.index;
    const kept = written.names.filter((name) => !this.inPlace.has(name) && this.uses(name) > 0);
    const definitions = kept.reduce((total, name) => total + this.entry(name), 0);
    return this.of(written.root) + (kept.length > 0 ? definitions + '"$defs":{}'.length : 0);
  }
}

/**
 * The document with the definitions in `inPlace` written where they are referred to (a
 * description beside such a reference goes onto the definition's copy), and the others, as far
 * as the document still refers to them, in `$defs`. Shares no object with what was written.
 */
export function buildDocument(written: WrittenDefinitions, inPlace: ReadonlySet<string>): SchemaNode {
  const kept = new Set<string>();
  const copy = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(copy);
    if (typeof value !== "object" || value === null) return value;
    const node = value as SchemaNode;
    const reference = written.references.get(node);
    if (reference !== undefined && reference.cut !== true) {
      if (inPlace.has(reference.target)) return copy(written.bodies.get(reference.target));
      if (reference.target !== written.root) kept.add(reference.target);
      return { $ref: node.$ref };
    }
    const wrapped = written.wrappers.get(node);
    if (wrapped !== undefined && wrapped.cut !== true && inPlace.has(wrapped.target)) {
      return { ...(copy(written.bodies.get(wrapped.target)) as SchemaNode), description: node.description };
    }
    // Object.fromEntries defines a member named "__proto__" as an own member.
    return Object.fromEntries(Object.entries(node).map(([key, member]) => [key, copy(member)]));
  };
  const document = copy(written.bodies.get(written.root)) as SchemaNode;
  const definitions = new Map<string, unknown>();
  for (let pending = [...kept]; pending.length > 0; pending = [...kept].filter((name) => !definitions.has(name))) {
    for (const name of pending) definitions.set(name, copy(written.bodies.get(name)));
  }
  if (definitions.size > 0) {
    const ordered = written.names.filter((name) => definitions.has(name));
    document.$defs = Object.fromEntries(ordered.map((name) => [name, definitions.get(name)]));
  }
  return document;
}

function referenceSize(name: string): number {
  return JSON.stringify({ $ref: `#/$defs/${name}` }).length;
}
