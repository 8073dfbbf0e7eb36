import { canonicalJson } from "./canonical-json.js";
import { compactJson } from "./compact-json.js";

/**
 * Calls `visit` with every balanced `{…}` span of `text` at least `minLength` long, found in
 * one pass (inner spans before the spans around them), until `visit` returns true.
 */
function forEachObjectSpan(text: string, minLength: number, visit: (span: string) => boolean): boolean {
  const opens: number[] = [];
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (inString) {
      if (unit === 0x5c) index++;
      else if (unit === 0x22) inString = false;
      continue;
    }
    if (unit === 0x7b) opens.push(index);
    else if (unit === 0x22 && opens.length > 0) inString = true;
    else if (unit === 0x7d && opens.length > 0) {
      const start = opens.pop() as number;
      if (index + 1 - start >= minLength && visit(text.slice(start, index + 1))) return true;
    }
  }
  return false;
}

function canonicalOf(candidate: string): string | undefined {
  try {
    return canonicalJson(JSON.parse(candidate));
  } catch {
    return undefined;
  }
}

/**
 * Whether `text` contains a JSON object equal to `value` (same canonical JSON), in any
 * formatting. Spans shorter than half the compact form cannot spell the value (even with
 * `1e5` for `100000`) and are not parsed. A miss only means the value is counted twice,
 * never less.
 */
export function containsJsonValue(text: string, value: unknown): boolean {
  const compact = compactJson(value);
  if (compact[0] !== "{") return false;
  const shortest = Math.ceil(compact.length / 2);
  if (text.length < shortest || !text.includes("{")) return false;
  if (text.includes(compact)) return true;
  let wanted: string | undefined;
  return forEachObjectSpan(text, shortest, (span) => {
    wanted ??= canonicalJson(value);
    return canonicalOf(span) === wanted;
  });
}

/** The canonical JSON of the JSON objects of 16 characters or more embedded in `text` (at most `limit`, innermost first). */
export function embeddedJsonObjects(text: string, limit: number): string[] {
  const found: string[] = [];
  forEachObjectSpan(text, 16, (span) => {
    const canonical = canonicalOf(span);
    if (canonical !== undefined) found.push(canonical);
    return found.length >= limit;
  });
  return found;
}
