import type { Projected, Shape } from "./shape-types.js";

/**
 * A rough size of a projected shape in nodes: enough to tell whether writing the keywords beside
 * some alternatives into each of them repeats them. A shape that stands for a definition counts
 * once, as the `$ref` it is written as. `memo` remembers shapes already weighed.
 */
export function weightOf(shape: Projected | undefined, memo: WeakMap<Shape, number>): number {
  if (shape === undefined || shape === false) return 0;
  if (shape.ref !== undefined) return 1;
  const known = memo.get(shape);
  if (known !== undefined) return known;
  let weight = 1 + (shape.enum?.length ?? 0) + weightOf(shape.items, memo) + weightOf(shape.additional, memo);
  for (const property of shape.properties?.values() ?? []) weight += 1 + weightOf(property, memo);
  for (const alternative of shape.anyOf ?? []) weight += weightOf(alternative, memo);
  memo.set(shape, weight);
  return weight;
}
