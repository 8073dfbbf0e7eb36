import { canonicalJson } from "./canonical-json.js";

/**
 * Whether `text` contains a JSON object equal to `value` (same canonical JSON), in any
 * formatting. Balanced `{…}` spans are found in one pass; spans shorter than half the
 * compact form cannot spell the value (even with `1e5` for `100000`) and are not parsed.
 * A miss only means the value is counted twice, never less.
 */
export function containsJsonValue(text: string, value: unknown): boolean {
  const compact = JSON.stringify(value);
  if (compact === undefined || compact[0] !== "{") return false;
  const shortest = Math.ceil(compact.length / 2);
  if (text.length < shortest) return false;
  if (text.includes(compact)) return true;
  const wanted = canonicalJson(value);
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
      if (index + 1 - start >= shortest && parsesTo(text.slice(start, index + 1), wanted)) return true;
    }
  }
  return false;
}

function parsesTo(candidate: string, wantedCanonical: string): boolean {
  try {
    return canonicalJson(JSON.parse(candidate)) === wantedCanonical;
  } catch {
    return false;
  }
}
