import type { JsonType } from "./values.js";

/**
 * One projected node. A missing member constrains nothing; `false` (see {@link Projected})
 * accepts nothing. `types` is never empty.
 */
export interface Shape {
  /** The JSON pointer of the schema node this shape was read from, for the omitted list. */
  origin: string;
  types?: JsonType[];
  enum?: unknown[];
  properties?: Map<string, Projected>;
  required?: string[];
  /**
   * What properties outside `properties` must match: `false` when none are allowed (used only for
   * merging), otherwise the value schema of a map (`additionalProperties`, `patternProperties`).
   */
  additional?: Projected;
  items?: Projected;
  description?: string;
  propertyOrdering?: string[];
  /**
   * Alternatives kept as an `anyOf` (at least two). A shape with alternatives holds nothing else
   * but its origin, description and reference tag: whatever applied beside them is in each one.
   */
  anyOf?: Shape[];
  /** Set while the shape is, but for its description, the projection of a referenced definition. */
  ref?: RefTag;
  /** Why the shape was left open (a recursion cut short), for the writer to list if it writes it. */
  cut?: string;
}

/** Which definition a shape stands for, so that it can be written as a `$ref` to it. */
export interface RefTag {
  /** The JSON pointer of the referenced schema node in the document: one key per definition. */
  key: string;
  /** The definition's projection, description included, from which its body is written. */
  definition: Shape;
}

/** A projected node, or `false` for a node that no instance can match. */
export type Projected = Shape | false;
