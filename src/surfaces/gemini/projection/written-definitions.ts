import type { SchemaNode } from "./render.js";

/** One `$ref` the writer wrote: its node, what it points at and which body it stands in. */
export interface Reference {
  node: SchemaNode;
  /** A definition's name, or the document's `root`. */
  target: string;
  container: string;
  /** The one-branch `anyOf` that carries the referring node's own description, if any. */
  wrapper?: SchemaNode;
  /** Set when the reference was replaced by an open node. */
  cut?: boolean;
}

/** What the writer wrote: the bodies by name (the document's under `root`), and its references. */
export interface WrittenDefinitions {
  readonly root: string;
  /** Definition names in the order they were first met, which `$defs` keeps. */
  readonly names: readonly string[];
  readonly bodies: ReadonlyMap<string, SchemaNode>;
  readonly references: ReadonlyMap<SchemaNode, Reference>;
  readonly wrappers: ReadonlyMap<SchemaNode, Reference>;
  /** The pointer each definition was read from, and where each object node was, for the omitted list. */
  keyOf(name: string): string;
  originOf(node: SchemaNode): string | undefined;
}
