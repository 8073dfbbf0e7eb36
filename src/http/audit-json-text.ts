import { type GatewayError, invalidRequest } from "../errors/gateway-error.js";
import { cutText, memberPath } from "../json/member-path.js";

/** A key that an object of a JSON text holds twice. */
export interface DuplicateKey {
  key: string;
  /** The path of the object that holds it, `""` for the top level, as fields are named elsewhere (`messages[0]`). */
  objectPath: string;
}

const quote = 0x22;
const backslash = 0x5c;
const colon = 0x3a;

/** The longest object path an error names; a deeper one is cut at its start. */
const maxShownPath = 200;

/** What the raw text of a body says that its parsed value does not. */
export interface TextAudit {
  /** The first key repeated within one object, if any. */
  duplicate: DuplicateKey | undefined;
  /**
   * Code points by which the body's number literals are written longer than the compact JSON of
   * their values (`1.000…0`, `1e0000`, a 30-digit integer): the parsed value loses them, the bytes
   * sent upstream keep them, and a model reading the literal reads them all.
   */
  numberExcess: number;
  /** The length of the body's longest number literal, in characters. */
  longestNumber: number;
}

/**
 * Audits valid JSON `text` against `parsed`, its JSON.parse value. Decision (contract section 3,
 * "what is sent is what was measured"): a body with a duplicate key in any object at any depth is
 * refused, because JSON.parse keeps the last occurrence, the gateway measures that, and the
 * client's bytes with every occurrence are what goes upstream, where a provider may read the first.
 * Refusing costs nothing for a correct client; re-serializing would change the bytes sent (and the
 * value of integers past 2^53). Number literals written longer than their value are counted
 * instead, by their excess, for the same reason.
 *
 * The audit is cheap on purpose: one pass from quote to quote with `indexOf` counts the key tokens
 * (compared with the own keys of the parsed tree: they differ exactly when JSON.parse dropped a
 * repeated key, and only then is the text tokenized to name the duplicate) and reads the number
 * literals between strings.
 */
export function auditJsonText(text: string, parsed: unknown): TextAudit {
  const { keys, numbers } = scan(text);
  const duplicate = keys < 2 || keys === ownKeys(parsed) ? undefined : locateDuplicate(text);
  return { duplicate, numberExcess: numbers.excess, longestNumber: numbers.longest };
}

/** The first key repeated within one object of valid JSON `text` (`parsed` its value), or undefined. */
export function findDuplicateKey(text: string, parsed: unknown): DuplicateKey | undefined {
  return auditJsonText(text, parsed).duplicate;
}

/** The INVALID_REQUEST for a duplicate key; it names the key (cut to 64 characters) and the object, never a value. */
export function duplicateKeyError({ key, objectPath }: DuplicateKey): GatewayError {
  const param = memberPath(objectPath, key);
  const shownKey = JSON.stringify(cutText(key, 64));
  const where = objectPath === "" ? "in its top-level object" : `in the object at '${cutStart(objectPath)}'`;
  return invalidRequest(`The request body has a duplicate key ${shownKey} ${where}.`, cutStart(param));
}

/** The position of the quote that closes the string opening at `open`, or -1 if none does. */
function closingQuote(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  for (;;) {
    let before = close - 1;
    while (text.charCodeAt(before) === backslash) before--;
    // An even run of backslashes escapes only itself.
    if ((close - 1 - before) % 2 === 0) return close;
    close = text.indexOf('"', close + 1);
  }
}

/** The position of the first character at or after `from` that is not JSON whitespace. */
function skipSpace(text: string, from: number): number {
  let index = from;
  for (;;) {
    const unit = text.charCodeAt(index);
    if (unit !== 0x20 && unit !== 0x0a && unit !== 0x0d && unit !== 0x09) return index;
    index++;
  }
}

/**
 * One pass over valid JSON text: how many of its strings are member names (followed by `:`), and
 * by how much its number literals (all outside strings) exceed their values' compact JSON.
 */
function scan(text: string): { keys: number; numbers: NumberLiterals } {
  let keys = 0;
  const numbers: NumberLiterals = { excess: 0, longest: 0 };
  let outside = 0;
  for (let open = text.indexOf('"'); ; ) {
    readLiterals(text, outside, open === -1 ? text.length : open, numbers);
    if (open === -1) break;
    const close = closingQuote(text, open);
    // Unterminated, so not valid JSON after all: nothing more to count, and no endless loop.
    if (close === -1) break;
    const after = skipSpace(text, close + 1);
    if (text.charCodeAt(after) === colon) keys++;
    outside = after;
    open = text.indexOf('"', after);
  }
  return { keys, numbers };
}

/** A number literal whose compact JSON is itself: an integer of at most 15 digits without leading zeros. */
const plainInteger = /^-?(?:0|[1-9]\d{0,14})$/;

/** What the number literals of a text say: by how much they exceed their values' compact JSON, and the longest. */
interface NumberLiterals {
  excess: number;
  longest: number;
}

/** Adds the number literals in `text` from `start` to `end` (outside any string) to `numbers`. */
function readLiterals(text: string, start: number, end: number, numbers: NumberLiterals): void {
  for (let index = start; index < end; index++) {
    const unit = text.charCodeAt(index);
    if (unit !== 0x2d && (unit < 0x30 || unit > 0x39)) continue;
    let last = index + 1;
    while (last < end && isLiteralUnit(text.charCodeAt(last))) last++;
    const literal = text.slice(index, last);
    if (literal.length > numbers.longest) numbers.longest = literal.length;
    if (!plainInteger.test(literal)) {
      numbers.excess += Math.max(0, literal.length - (JSON.stringify(Number(literal)) ?? "").length);
    }
    index = last - 1;
  }
}

/** Digits, sign, point and exponent: what a JSON number literal is made of. */
function isLiteralUnit(unit: number): boolean {
  return (
    (unit >= 0x30 && unit <= 0x39) || unit === 0x2e || unit === 0x65 || unit === 0x45 || unit === 0x2b || unit === 0x2d
  );
}

/** How many own keys the objects of a parsed JSON value hold in all, walked without recursion. */
function ownKeys(root: unknown): number {
  let keys = 0;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index];
        if (typeof item === "object" && item !== null) pending.push(item);
      }
    } else if (typeof value === "object" && value !== null) {
      // Object.keys, not for-in: an enumerable property someone added to Object.prototype must not count.
      const names = Object.keys(value);
      keys += names.length;
      for (const name of names) {
        const member: unknown = (value as Record<string, unknown>)[name];
        if (typeof member === "object" && member !== null) pending.push(member);
      }
    }
  }
  return keys;
}

/** An open object or array while tokenizing: its keys so far (objects) or its element index (arrays). */
interface Container {
  keys: Set<string> | undefined;
  lastKey: string;
  index: number;
  /** Its key or index in its parent; undefined for the top level. */
  label: string | number | undefined;
}

/** The first repeated key in valid JSON text, by one pass over it that keeps each open object's keys. */
function locateDuplicate(text: string): DuplicateKey | undefined {
  const open: Container[] = [];
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    const top = open[open.length - 1];
    if (unit === quote) {
      const close = closingQuote(text, index);
      if (close === -1) return undefined;
      if (top?.keys !== undefined && text.charCodeAt(skipSpace(text, close + 1)) === colon) {
        const raw = text.slice(index, close + 1);
        // `"a"` and `"\u0061"` name the same member once parsed.
        const key = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.keys.has(key)) return { key, objectPath: pathOf(open) };
        top.keys.add(key);
        top.lastKey = key;
      }
      index = close;
    } else if (unit === 0x7b || unit === 0x5b) {
      const label = top === undefined ? undefined : top.keys === undefined ? top.index : top.lastKey;
      open.push({ keys: unit === 0x7b ? new Set() : undefined, lastKey: "", index: 0, label });
    } else if (unit === 0x7d || unit === 0x5d) {
      open.pop();
    } else if (unit === 0x2c && top !== undefined && top.keys === undefined) {
      top.index++;
    }
  }
  return undefined;
}

function pathOf(open: Container[]): string {
  let path = "";
  for (const { label } of open) {
    if (typeof label === "number") path = `${path}[${label}]`;
    else if (label !== undefined) path = memberPath(path, label);
  }
  return path;
}

/** At most the last `maxShownPath` UTF-16 units of a path, not splitting a surrogate pair, marked when cut. */
function cutStart(path: string): string {
  if (path.length <= maxShownPath) return path;
  const start = path.length - maxShownPath;
  return `…${path.slice(isHighSurrogate(path.charCodeAt(start - 1)) ? start + 1 : start)}`;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
