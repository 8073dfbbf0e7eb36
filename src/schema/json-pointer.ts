/**
 * RFC 6901 JSON Pointers over parsed JSON: reading and copy-on-write replacement.
 * Only own members count, so `/constructor` or `/__proto__` never reach the prototype.
 */

/** What a pointer reads: `found` is false when any step does not resolve or the pointer is malformed. */
export interface PointerReading {
  found: boolean;
  value: unknown;
}

const notFound: PointerReading = { found: false, value: undefined };

/** An array index token: `0` or a number without a leading zero (RFC 6901 section 4). */
const arrayIndex = /^(0|[1-9][0-9]*)$/;

/** The value `pointer` names in `document`; `""` names the whole document. */
export function readPointer(document: unknown, pointer: string): PointerReading {
  const tokens = parsePointer(pointer);
  if (tokens === undefined) return notFound;
  let current = document;
  for (const token of tokens) {
    const step = childOf(current, token);
    if (!step.found) return notFound;
    current = step.value;
  }
  return { found: true, value: current };
}

/**
 * A copy of `document` with the value at `pointer` replaced by `value`. Only the objects and
 * arrays on the path are copied; everything else is shared and nothing is mutated.
 * Throws a `RangeError` when the pointer is malformed or does not resolve.
 */
export function replaceAtPointer(document: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens === undefined) throw new RangeError("malformed JSON Pointer");
  return replaceAt(document, tokens, 0, value);
}

function replaceAt(node: unknown, tokens: readonly string[], depth: number, value: unknown): unknown {
  const token = tokens[depth];
  if (token === undefined) return value;
  const step = childOf(node, token);
  if (!step.found) throw new RangeError("JSON Pointer does not resolve");
  const replaced = replaceAt(step.value, tokens, depth + 1, value);
  if (Array.isArray(node)) {
    const copy = node.slice();
    copy[Number(token)] = replaced;
    return copy;
  }
  // A computed key defines an own member even for "__proto__", where assignment would not.
  return { ...(node as Record<string, unknown>), [token]: replaced };
}

/** Escapes one reference token for a pointer (`~` as `~0`, `/` as `~1`). */
export function escapePointerToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** The tokens of a pointer, or of a URI fragment pointer (`#/a%20b`, percent-decoded); undefined if malformed. */
export function pointerTokens(pointer: string): string[] | undefined {
  if (!pointer.startsWith("#")) return parsePointer(pointer);
  try {
    return parsePointer(decodeURIComponent(pointer.slice(1)));
  } catch {
    return undefined;
  }
}

/** The unescaped reference tokens, or `undefined` for a malformed pointer. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return undefined;
  const tokens: string[] = [];
  for (const raw of pointer.slice(1).split("/")) {
    // `~` must be followed by 0 or 1; `~1` is unescaped before `~0`, so `~01` stays `~1`.
    if (/~(?![01])/.test(raw)) return undefined;
    tokens.push(raw.replaceAll("~1", "/").replaceAll("~0", "~"));
  }
  return tokens;
}

function childOf(node: unknown, token: string): PointerReading {
  if (Array.isArray(node)) {
    if (!arrayIndex.test(token)) return notFound;
    const index = Number(token);
    return index < node.length ? { found: true, value: node[index] } : notFound;
  }
  if (typeof node === "object" && node !== null && Object.hasOwn(node, token)) {
    return { found: true, value: (node as Record<string, unknown>)[token] };
  }
  return notFound;
}
