import { escapePointerToken } from "../../../schema/json-pointer.js";
import { isSchemaObject } from "../../../schema/schema-refs.js";
import type { Projected } from "./shape-types.js";

/** What reading an object's map part needs from the walk. */
export interface MapHooks {
  /** Whether the target takes `additionalProperties` (`responseJsonSchema` does, `responseSchema` does not). */
  keep: boolean;
  /** The JSON pointer of the node. */
  location: string;
  /** Projects a value schema found at `keyword` (a path below the node). */
  walk(value: unknown, keyword: string): Projected;
  /** What any of the value schemas accepts. */
  unite(values: readonly Projected[]): Projected;
  /** Lists what the projection leaves out at the node. */
  omit(what: string): void;
}

const lostEntries = "map entries; responseSchema has no additionalProperties";

/**
 * The node's rule for properties outside `properties`, as `Shape.additional`: `false` for
 * `additionalProperties: false` alone, as before. A map (a schema-valued `additionalProperties`,
 * or `patternProperties`) keeps, where the target takes it, one value schema that admits every
 * key the full schema admits with at least the values it allows there: the union of the pattern
 * values and of the `additionalProperties` schema, where an absent or `true` one admits anything.
 * Where the target has no `additionalProperties`, the map's entries are listed as lost.
 */
export function mapValues(node: Record<string, unknown>, hooks: MapHooks): Projected | undefined {
  const hasAdditional = "additionalProperties" in node;
  const hasPatterns = "patternProperties" in node;
  if (!hasAdditional && !hasPatterns) return undefined;
  const additional = node.additionalProperties;
  const patterns = node.patternProperties;
  if (hasPatterns && !isSchemaObject(patterns)) hooks.omit("patternProperties");
  const patternEntries = isSchemaObject(patterns) ? Object.entries(patterns) : [];
  if (additional === false && patternEntries.length === 0) {
    hooks.omit("additionalProperties");
    return false;
  }
  const readable = additional === undefined || typeof additional === "boolean" || isSchemaObject(additional);
  if (!hooks.keep || !readable) {
    if (hasAdditional)
      hooks.omit(additional === false || !readable ? "additionalProperties" : `additionalProperties (${lostEntries})`);
    if (patternEntries.length > 0) hooks.omit(`patternProperties (${lostEntries})`);
    return undefined;
  }
  const values = patternEntries.map(([pattern, value]) =>
    hooks.walk(value, `patternProperties/${escapePointerToken(pattern)}`),
  );
  if (additional === undefined || additional === true)
    values.push({ origin: `${hooks.location}/additionalProperties` });
  else if (additional !== false) values.push(hooks.walk(additional, "additionalProperties"));
  if (patternEntries.length > 0) {
    // The projection admits any key with those values: the keys' patterns stay with local validation.
    if (additional === false) hooks.omit("additionalProperties");
    hooks.omit("patternProperties (key patterns; their values are admitted for any key)");
  }
  return hooks.unite(values);
}
