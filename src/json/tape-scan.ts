import { decodedKey } from "./decode-text.js";
import { type KeptSegments, moveTokens, segmentLimits } from "./kept-segments.js";
import { escapedLength, hex4, utf8Width } from "./string-bytes.js";
import {
  backslash,
  type Copied,
  escapeFlag,
  quote,
  type Segment,
  type TapeColumns,
  TapeKind,
  wideFlag,
} from "./tape.js";
import type { ColumnSlab } from "./tape-columns.js";
import { plainText, plainWords, type RunCount, textRun } from "./text-runs.js";

/**
 * The most tokens a tape holds (22 bytes each): a body denser than that, e.g. megabytes of `[1,1,1,…]`, would take
 * more memory as a tape than parsed, so it goes to the parser instead.
 */
const maxTokens = 1 << 20;
/**
 * The longest number literal a body may hold, in characters: far past the 767 significant digits of the longest
 * decimal expansion of a double, so no JSON writer reaches it; a longer one is refused (see `parseJsonBody`).
 */
export const maxNumberLiteral = 4096;

/** Thrown when a tape would grow past `maxTokens`; `JsonScanner.scan` then leaves the body to the parser. */
export const tooManyTokens = new Error("The body has more JSON values than a tape holds.");

/**
 * One scan of a body into tape columns: a recursive descent over its bytes that validates as it goes and returns
 * false at the first thing it is not sure of.
 */
export class TapeScan implements RunCount {
  readonly bytes: Uint8Array;
  readonly length: number;
  at = 0;
  count = 0;
  columns: TapeColumns;
  numberExcess = 0;
  /** Keys decoded while scanning (for duplicates), kept for the readers of the tape. */
  readonly keys = new Map<number, string>();
  /** The continuation bytes of the last run `textRun` read. */
  continuations = 0;
  /** The bytes as 32-bit words, when their offset lets them be read so. */
  readonly words: Uint32Array | undefined;
  /** The values copied from kept ones (see `KeptSegments`), by their first token, in tape order. */
  readonly copied: Copied[] = [];
  /** The deepest nesting met so far (a kept value's depth, see `topMember`). */
  #deepest = 0;
  readonly #slab: ColumnSlab;
  readonly #segments: KeptSegments;
  readonly #maxDepth: number;
  /** Whether the body's UTF-8 is checked already (see `JsonScanner`). */
  readonly #checkedUtf8: boolean;

  constructor(bytes: Uint8Array, slab: ColumnSlab, segments: KeptSegments, maxDepth: number, checkedUtf8: boolean) {
    this.bytes = bytes;
    this.length = bytes.length;
    this.words =
      bytes.byteOffset % 4 === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2) : undefined;
    this.#slab = slab;
    this.#segments = segments;
    this.#maxDepth = maxDepth;
    this.#checkedUtf8 = checkedUtf8;
    // About one token per 32 bytes, as in a call of text and a schema; a body denser in tokens grows its tape.
    this.columns = slab.columns(64 + Math.min(bytes.length >> 5, 8192));
  }

  /** A new token of `kind` starting at `start`; its index. */
  token(kind: TapeKind, start: number): number {
    if (this.count === this.columns.kind.length) this.grow();
    const index = this.count++;
    this.columns.kind[index] = kind;
    this.columns.start[index] = start;
    this.columns.flags[index] = 0;
    return index;
  }

  grow(): void {
    const old = this.columns;
    if (old.kind.length >= maxTokens) throw tooManyTokens;
    const columns = this.#slab.columns(old.kind.length * 2);
    for (const name of Object.keys(columns) as (keyof TapeColumns)[]) columns[name].set(old[name]);
    this.columns = columns;
  }

  skipSpace(): void {
    const bytes = this.bytes;
    let at = this.at;
    for (;;) {
      const byte = bytes[at];
      if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break;
      at++;
    }
    this.at = at;
  }

  /** Reads one value at the current position; false when the text is not what the scanner accepts. */
  value(depth: number): boolean {
    this.skipSpace();
    const byte = this.bytes[this.at];
    if (byte === quote) return this.string();
    if (byte === 0x7b) return this.object(depth + 1);
    if (byte === 0x5b) return this.array(depth + 1);
    if (byte === 0x74) return this.literal(TapeKind.True, "true");
    if (byte === 0x66) return this.literal(TapeKind.False, "false");
    if (byte === 0x6e) return this.literal(TapeKind.Null, "null");
    return this.number();
  }

  literal(kind: TapeKind, word: string): boolean {
    const bytes = this.bytes;
    const start = this.at;
    for (let index = 0; index < word.length; index++) {
      if (bytes[start + index] !== word.charCodeAt(index)) return false;
    }
    const index = this.token(kind, start);
    this.at = start + word.length;
    this.columns.end[index] = this.at;
    this.columns.next[index] = index + 1;
    this.columns.compact[index] = word.length;
    return true;
  }

  number(): boolean {
    const bytes = this.bytes;
    const start = this.at;
    let at = start;
    if (bytes[at] === 0x2d) at++;
    const first = bytes[at];
    if (first === 0x30) at++;
    else if (first !== undefined && first >= 0x31 && first <= 0x39) {
      at++;
      for (let digit = bytes[at]; digit !== undefined && digit >= 0x30 && digit <= 0x39; digit = bytes[++at]);
    } else return false;
    const digits = at - start - (bytes[start] === 0x2d ? 1 : 0);
    let integer = true;
    if (bytes[at] === 0x2e) {
      integer = false;
      at++;
      const fraction = at;
      for (let digit = bytes[at]; digit !== undefined && digit >= 0x30 && digit <= 0x39; digit = bytes[++at]);
      if (at === fraction) return false;
    }
    if (bytes[at] === 0x65 || bytes[at] === 0x45) {
      integer = false;
      at++;
      if (bytes[at] === 0x2b || bytes[at] === 0x2d) at++;
      const exponent = at;
      for (let digit = bytes[at]; digit !== undefined && digit >= 0x30 && digit <= 0x39; digit = bytes[++at]);
      if (at === exponent) return false;
    }
    // A literal longer than any JSON writer makes is left to the parsing path, which refuses it.
    if (at - start > maxNumberLiteral) return false;
    const index = this.token(TapeKind.Number, start);
    this.at = at;
    this.columns.end[index] = at;
    this.columns.next[index] = index + 1;
    const length = at - start;
    // An integer of at most 15 digits is its own compact JSON (the audit of the parsing path says the same), but
    // -0, whose is "0"; any other literal is compared with its value's.
    if (integer && digits <= 15) {
      this.columns.compact[index] = length === 2 && bytes[start] === 0x2d && bytes[start + 1] === 0x30 ? 1 : length;
      return true;
    }
    const literal = String.fromCharCode.apply(null, bytes.subarray(start, at) as unknown as number[]);
    const compact = (JSON.stringify(Number(literal)) ?? "").length;
    this.columns.compact[index] = compact;
    if (literal.length > compact) this.numberExcess += literal.length - compact;
    return true;
  }

  /** A string: validates its UTF-8 and escapes, and counts its code points as decoded and as compact JSON. */
  string(): boolean {
    const bytes = this.bytes;
    const length = this.length;
    const words = this.words;
    const start = this.at;
    let at = start + 1;
    let chars = 0;
    let compact = 2;
    let flags = 0;
    const checkedUtf8 = this.#checkedUtf8;
    for (;;) {
      // A run of plain ASCII, the bulk of most text: four bytes at a time where they line up, then byte by byte.
      const run = at;
      if (words !== undefined) at = plainWords(bytes, words, at, length);
      while (at < length && plainText[bytes[at] as number] === 1) at++;
      const byte = bytes[at] as number;
      chars += at - run;
      compact += at - run;
      if (at >= length) return false;
      if (byte === quote) break;
      if (byte < 0x80) {
        if (byte === backslash) {
          flags |= escapeFlag;
          const escaped = bytes[at + 1];
          if (escaped === 0x75) {
            let unit = hex4(bytes, at + 2);
            if (unit < 0) return false;
            at += 6;
            if (unit >= 0xd800 && unit <= 0xdbff && bytes[at] === backslash && bytes[at + 1] === 0x75) {
              const low = hex4(bytes, at + 2);
              if (low < 0) return false;
              if (low >= 0xdc00 && low <= 0xdfff) {
                // A surrogate pair: one code point, written as itself.
                at += 6;
                unit = 0x10000;
              }
            }
            chars++;
            compact += escapedLength(unit);
            continue;
          }
          if (escaped === quote || escaped === backslash) compact += 2;
          else if (escaped === 0x62 || escaped === 0x66 || escaped === 0x6e || escaped === 0x72 || escaped === 0x74)
            compact += 2;
          else if (escaped === 0x2f) compact += 1;
          else return false;
          chars++;
          at += 2;
          continue;
        }
        // A raw control character is not JSON.
        return false;
      }
      flags |= wideFlag;
      if (checkedUtf8) {
        // Text past ASCII in a body of checked UTF-8: read on as a run of its own.
        const text = at;
        at = textRun(bytes, words, at, length, this);
        chars += at - text - this.continuations;
        compact += at - text - this.continuations;
        continue;
      }
      // The two-byte letters and the common three-byte characters here; the rest in utf8Width.
      const second = (bytes[at + 1] as number) & 0xc0;
      let width: number;
      if (byte >= 0xc2 && byte <= 0xdf && second === 0x80) width = 2;
      else if (
        byte >= 0xe1 &&
        byte <= 0xef &&
        byte !== 0xed &&
        second === 0x80 &&
        ((bytes[at + 2] as number) & 0xc0) === 0x80
      ) {
        width = 3;
      } else width = utf8Width(bytes, at, byte);
      if (width === 0) return false;
      at += width;
      chars++;
      compact++;
    }
    const index = this.token(TapeKind.String, start);
    this.at = at + 1;
    this.columns.end[index] = at + 1;
    this.columns.next[index] = index + 1;
    this.columns.size[index] = chars;
    this.columns.compact[index] = compact;
    this.columns.flags[index] = flags;
    return true;
  }

  array(depth: number): boolean {
    if (depth > this.#maxDepth) return false;
    if (depth > this.#deepest) this.#deepest = depth;
    const index = this.token(TapeKind.Array, this.at);
    this.at++;
    let items = 0;
    let compact = 2;
    this.skipSpace();
    if (this.bytes[this.at] === 0x5d) this.at++;
    else {
      for (;;) {
        const item = this.count;
        if (!this.value(depth)) return false;
        compact += (this.columns.compact[item] as number) + (items === 0 ? 0 : 1);
        items++;
        this.skipSpace();
        const byte = this.bytes[this.at];
        this.at++;
        if (byte === 0x5d) break;
        if (byte !== 0x2c) return false;
      }
    }
    this.columns.end[index] = this.at;
    this.columns.next[index] = this.count;
    this.columns.size[index] = items;
    this.columns.compact[index] = compact;
    return true;
  }

  object(depth: number): boolean {
    if (depth > this.#maxDepth) return false;
    if (depth > this.#deepest) this.#deepest = depth;
    const bytes = this.bytes;
    const index = this.token(TapeKind.Object, this.at);
    this.at++;
    let members = 0;
    let compact = 2;
    let seen: Set<string> | undefined;
    const firstKey = this.count;
    this.skipSpace();
    if (bytes[this.at] === 0x7d) this.at++;
    else {
      for (;;) {
        this.skipSpace();
        if (bytes[this.at] !== quote) return false;
        const key = this.count;
        if (!this.string()) return false;
        // No key twice: a parser keeps only the last, while the bytes sent upstream keep them all.
        if (members < 8) {
          for (let other = firstKey; other < key; other = this.columns.next[other + 1] as number) {
            if (this.sameKey(other, key)) return false;
          }
        } else {
          if (seen === undefined) {
            seen = new Set();
            for (let other = firstKey; other < key; other = this.columns.next[other + 1] as number) {
              seen.add(this.keyText(other));
            }
          }
          const name = this.keyText(key);
          if (seen.has(name)) return false;
          seen.add(name);
        }
        this.skipSpace();
        if (bytes[this.at] !== 0x3a) return false;
        this.at++;
        const value = this.count;
        if (!(depth === 1 ? this.topMember() : this.value(depth))) return false;
        compact +=
          (this.columns.compact[key] as number) + 1 + (this.columns.compact[value] as number) + (members === 0 ? 0 : 1);
        members++;
        this.skipSpace();
        const byte = bytes[this.at];
        this.at++;
        if (byte === 0x7d) break;
        if (byte !== 0x2c) return false;
      }
    }
    this.columns.end[index] = this.at;
    this.columns.next[index] = this.count;
    this.columns.size[index] = members;
    this.columns.compact[index] = compact;
    return true;
  }

  /**
   * The value of a member of the top-level object: where it is an object or array whose bytes were scanned before
   * (a response schema, tool declarations), its tokens are copied from then (see `Segment`) instead of scanned again.
   */
  topMember(): boolean {
    this.skipSpace();
    const bytes = this.bytes;
    const at = this.at;
    const open = bytes[at];
    if ((open !== 0x7b && open !== 0x5b) || this.length - at < segmentLimits.minBytes) return this.value(1);
    const segments = this.#segments;
    const prefix = segments.prefixOf(bytes, at);
    const segment = segments.find(bytes, at, prefix, this.#maxDepth);
    if (segment !== undefined) {
      this.copy(segment, at);
      return true;
    }
    const first = this.count;
    const deepest = this.#deepest;
    const numberExcess = this.numberExcess;
    this.#deepest = 0;
    if (!this.value(1)) return false;
    const depth = this.#deepest - 1;
    this.#deepest = Math.max(deepest, this.#deepest);
    segments.sighted(bytes, this.columns, prefix, first, this.count, at, this.at, {
      depth,
      numberExcess: this.numberExcess - numberExcess,
    });
    return true;
  }

  /** Appends the tokens of `segment`, whose bytes stand at `at`. */
  copy(segment: Segment, at: number): void {
    const tokens = segment.columns.kind.length;
    while (this.count + tokens > this.columns.kind.length) this.grow();
    const first = this.count;
    moveTokens(segment.columns, 0, this.columns, first, tokens, at);
    this.count += tokens;
    this.at = at + segment.bytes.length;
    this.numberExcess += segment.numberExcess;
    this.copied.push({ first, segment });
  }

  /** Whether two key tokens name the same key: without escapes, exactly when their bytes are equal (UTF-8 is checked canonical). */
  sameKey(first: number, second: number): boolean {
    if (((this.columns.flags[first] as number) | (this.columns.flags[second] as number)) & escapeFlag) {
      return this.keyText(first) === this.keyText(second);
    }
    const bytes = this.bytes;
    const start = this.columns.start[first] as number;
    const other = this.columns.start[second] as number;
    const length = (this.columns.end[first] as number) - start;
    if ((this.columns.end[second] as number) - other !== length) return false;
    for (let index = 1; index < length - 1; index++) if (bytes[start + index] !== bytes[other + index]) return false;
    return true;
  }

  keyText(index: number): string {
    return decodedKey(this.keys, this.bytes, this.columns, index);
  }
}
