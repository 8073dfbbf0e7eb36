import { compactForm } from "../json/compact-json.js";
import type { CallText } from "../logical-call.js";

const surrogate = /[\uD800-\uDFFF]/;

/**
 * Counts Unicode code points: a valid surrogate pair is one, a lone surrogate is one.
 * Strings without surrogates (the common case) are answered by a native regex scan.
 */
export function codePoints(text: string): number {
  const first = text.search(surrogate);
  if (first === -1) return text.length;
  let count = text.length;
  const last = text.length - 1;
  for (let index = first; index < last; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        index++;
      }
    }
  }
  return count;
}

/** Counts the code points of several texts together; a text counted from the bytes already knows its count. */
export function codePointsOf(texts: readonly CallText[]): number {
  let count = 0;
  for (const text of texts) count += typeof text === "string" ? codePoints(text) : text.chars;
  return count;
}

/** Counts a structured value as its compact JSON (`JSON.stringify` without spaces). */
export function compactJsonCodePoints(value: unknown): number {
  if (value === undefined) return 0;
  const form = compactForm(value);
  form.chars ??= codePoints(form.text);
  return form.chars;
}
