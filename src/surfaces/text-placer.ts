import { isObject, type JsonObject } from "../json/json-object.js";

/**
 * Returns a function that, over one or more lists of parts, puts `text` into the first part
 * `isText` selects and drops every later such part: an answer split over several text parts
 * becomes one part holding the whole (e.g. repaired) answer.
 */
export function textPlacer(text: string, isText: (part: JsonObject) => boolean): (parts: unknown[]) => unknown[] {
  let placed = false;
  return (parts) =>
    parts.flatMap((part) => {
      if (!isObject(part) || !isText(part)) return [part];
      if (placed) return [];
      placed = true;
      return [{ ...part, text }];
    });
}
