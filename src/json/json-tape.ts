/**
 * A JSON body read in one pass over its UTF-8 bytes, without decoding it into a string or parsing
 * it into objects: a tape of its values in document order, each with its byte range, the index
 * after its subtree, and what measurement needs of it: a string's code points, and every value's
 * code points as compact JSON (what `JSON.stringify` of its parsed value would write).
 *
 * The scanner accepts only what it is sure of: valid UTF-8, valid JSON (the grammar `JSON.parse`
 * takes), a top-level object, nesting no deeper than the limit, and no key twice in one object.
 * Anything else returns undefined, and the caller defers to the parser, whose verdict (and error
 * message) then stands. Values are decoded one at a time, only where a reader asks for one.
 */

/** The kinds of values on a tape. */
export const TapeKind = { Object: 0, Array: 1, String: 2, Number: 3, True: 4, False: 5, Null: 6 } as const;
export type TapeKind = (typeof TapeKind)[keyof typeof TapeKind];

/** The columns of a tape: one entry per token. */
export interface TapeColumns {
  kind: Uint8Array;
  /** Byte offset of the token's first byte (a string's opening quote). */
  start: Int32Array;
  /** Byte offset just past the token (a container's closing bracket, a string's closing quote). */
  end: Int32Array;
  /** The index of the token after this value and its subtree. */
  next: Int32Array;
  /** A string's code points (decoded); a container's members or items. */
  size: Int32Array;
  /** Code points of the value's compact JSON (`JSON.stringify` of the parsed value). */
  compact: Int32Array;
  /** 1 when a string holds an escape, 2 when it holds a byte past ASCII. */
  flags: Uint8Array;
}

/** A body read into a tape. Token 0 is the top-level object. */
export interface Tape extends TapeColumns {
  bytes: Uint8Array;
  /** Tokens on the tape. */
  count: number;
  /** Code points by which number literals are written longer than their values' compact JSON. */
  numberExcess: number;
  /** Member names decoded so far, by token index (see `keyOf`). */
  keys: Map<number, string>;
  /** The values copied from kept ones (see `Segment`), by their first token, in tape order. */
  copied: readonly Copied[];
}

/** A value of a tape copied from a kept one: its first token and where it came from. */
interface Copied {
  first: number;
  segment: Segment;
}

const quote = 0x22;
const backslash = 0x5c;
const escapeFlag = 1;
const wideFlag = 2;

/** 1 for a byte that stands for itself in a string: ASCII but a control character, the quote and the backslash. */
const plainText = new Uint8Array(256);
for (let byte = 0x20; byte < 0x80; byte++) plainText[byte] = byte === quote || byte === backslash ? 0 : 1;
/**
 * The same for a body whose UTF-8 is known to be well-formed (see `useUtf8Check`): every byte past ASCII stands for
 * itself too, 2 for a continuation byte (0x80-0xBF), which adds no code point, 1 for a lead byte.
 */
const plainUtf8 = Uint8Array.from(plainText);
for (let byte = 0x80; byte < 0x100; byte++) plainUtf8[byte] = byte < 0xc0 ? 2 : 1;

/**
 * The whole-body UTF-8 check the runtime gives the scanner, if any (Node's `buffer.isUtf8`, which runs at memory
 * speed): a body it passes is read with text past ASCII four bytes at a time, as ASCII is. Without one (Workers), the
 * scanner checks each sequence where it meets it.
 */
let utf8Check: ((bytes: Uint8Array) => boolean) | undefined;

/**
 * Gives the scanner a check of a whole body's UTF-8, exactly as strict as a fatal TextDecoder (undefined: none). A
 * body it refuses goes to the parser, whose decoder then refuses it.
 */
export function useUtf8Check(check: ((bytes: Uint8Array) => boolean) | undefined): void {
  utf8Check = check;
}

const hexValue = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 10; digit++) hexValue[0x30 + digit] = digit;
for (let letter = 0; letter < 6; letter++) {
  hexValue[0x41 + letter] = 10 + letter;
  hexValue[0x61 + letter] = 10 + letter;
}

/** The compact JSON length of one code point inside a string, as `JSON.stringify` escapes it. */
function escapedLength(codePoint: number): number {
  if (codePoint === quote || codePoint === backslash) return 2;
  if (codePoint < 0x20) {
    return codePoint === 0x08 || codePoint === 0x09 || codePoint === 0x0a || codePoint === 0x0c || codePoint === 0x0d
      ? 2
      : 6;
  }
  // A lone surrogate: well-formed JSON.stringify writes it as \uXXXX.
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return 6;
  return 1;
}

/**
 * The slab that short calls' tape columns are cut from. An ArrayBuffer of its own costs about 2 µs to allocate however
 * small it is, most of the scan of a short body (3.8 µs for 30 bytes); views into a slab cost a twentieth of that. A
 * slab's bytes are used once (fresh, so zero), and it is freed with the last tape cut from it. Small, and for small
 * tapes only, so that a call that lasts (a stream) keeps no more than 16 KiB alive that it does not use; a larger
 * tape's allocation costs little beside its scan.
 */
const slabBytes = 16 * 1024;
/** The largest columns cut from a slab: a tape of 186 tokens, a body of about 4 KB. */
const slabbedBytes = 4 * 1024;
let slab = new ArrayBuffer(slabBytes);
let slabUsed = 0;

/**
 * The columns of a tape of `capacity` tokens, in one piece of memory: cut from the slab where they fit, unless they
 * are to be kept (`own`: a kept value's outlives any call).
 */
function tokenColumns(capacity: number, own = false): TapeColumns {
  const bytes = capacity * 22;
  let buffer: ArrayBuffer;
  let offset = 0;
  if (own || bytes > slabbedBytes) buffer = new ArrayBuffer(bytes);
  else {
    if (slabUsed + bytes > slabBytes) {
      slab = new ArrayBuffer(slabBytes);
      slabUsed = 0;
    }
    buffer = slab;
    offset = slabUsed;
    // The next columns start on an 8-byte boundary, as their 4-byte columns need.
    slabUsed += (bytes + 7) & ~7;
  }
  const int32 = (column: number) => new Int32Array(buffer, offset + column * capacity * 4, capacity);
  return {
    start: int32(0),
    end: int32(1),
    next: int32(2),
    size: int32(3),
    compact: int32(4),
    kind: new Uint8Array(buffer, offset + capacity * 20, capacity),
    flags: new Uint8Array(buffer, offset + capacity * 21, capacity),
  };
}

/**
 * The end of the run of plain text bytes (see `plainText`) from `from`, found four bytes at a time from the first
 * word boundary on, with the classic tests for a byte below a bound; the byte loop finishes the run.
 */
function plainWords(bytes: Uint8Array, words: Uint32Array, from: number, length: number): number {
  let at = from;
  while ((at & 3) !== 0 && at < length && plainText[bytes[at] as number] === 1) at++;
  if ((at & 3) !== 0) return at;
  let word = at >> 2;
  const last = words.length;
  while (word < last) {
    const value = words[word] as number;
    // A byte past ASCII, below 0x20, a quote (0x22) or a backslash (0x5c) ends the run.
    const quoteBytes = value ^ 0x22222222;
    const backslashBytes = value ^ 0x5c5c5c5c;
    const stop =
      (value |
        ((value - 0x20202020) & ~value) |
        ((quoteBytes - 0x01010101) & ~quoteBytes) |
        ((backslashBytes - 0x01010101) & ~backslashBytes)) &
      0x80808080;
    if (stop !== 0) break;
    word++;
  }
  return word << 2;
}

/** The continuation bytes of the last run `textRun` read. */
let runContinuations = 0;

/**
 * The end of the run of text from `from` in a body of checked UTF-8, where every byte past ASCII stands for itself:
 * four bytes at a time from the first word boundary on, counting the continuation bytes (10xxxxxx), which add no code
 * point, into `runContinuations`: in each byte's lane of `lanes`, summed every 255 words (a lane holds up to 255).
 */
function textRun(bytes: Uint8Array, words: Uint32Array | undefined, from: number, length: number): number {
  let at = from;
  let continuations = 0;
  for (; at < length && (words === undefined || (at & 3) !== 0); at++) {
    const kind = plainUtf8[bytes[at] as number] as number;
    if (kind === 0) break;
    continuations += kind >> 1;
  }
  if (words !== undefined && (at & 3) === 0) {
    let word = at >> 2;
    const last = words.length;
    while (word < last) {
      const until = Math.min(last, word + 255);
      let lanes = 0;
      for (; word < until; word++) {
        const value = words[word] as number;
        // As in `plainWords`, but a byte past ASCII goes on. Written out in both: a helper shared by the two loops,
        // measured, made the scan without the check 4-7 % slower.
        const quoteBytes = value ^ 0x22222222;
        const backslashBytes = value ^ 0x5c5c5c5c;
        const stop =
          (((value - 0x20202020) & ~value) |
            ((quoteBytes - 0x01010101) & ~quoteBytes) |
            ((backslashBytes - 0x01010101) & ~backslashBytes)) &
          0x80808080;
        if (stop !== 0) break;
        lanes += (value & ~(value << 1) & 0x80808080) >>> 7;
      }
      continuations += (lanes & 0xff) + ((lanes >>> 8) & 0xff) + ((lanes >>> 16) & 0xff) + (lanes >>> 24);
      if (word < until) break;
    }
    for (at = word << 2; at < length; at++) {
      const kind = plainUtf8[bytes[at] as number] as number;
      if (kind === 0) break;
      continuations += kind >> 1;
    }
  }
  runContinuations = continuations;
  return at;
}

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

const tooManyTokens = new Error("The body has more JSON values than a tape holds.");

/**
 * The tokens of a top-level member's value as its scan left them, for the next body that holds the same bytes there.
 * A value's tokens follow from its bytes alone (JSON's grammar has no context), so bytes found equal give the same
 * tokens, their offsets moved: what the scanner checks (UTF-8, grammar, keys once, nesting) holds for them as it held.
 */
interface Segment {
  /** A copy of the value's bytes. */
  bytes: Uint8Array;
  /**
   * Copies of them that start 0 to 3 bytes into a word (the first is `bytes`), made when a body needs one, so that
   * they compare four bytes at a time.
   */
  aligned: (Uint8Array | undefined)[];
  /** Its tokens: offsets from the value's first byte, `next` from its first token. */
  columns: TapeColumns;
  /** The levels of nesting it holds, its own included. */
  depth: number;
  /** Its share of the tape's `numberExcess`. */
  numberExcess: number;
  /** The recurring values found in it (see `recurringValue`), by token from its first: found again without a hash. */
  values: Map<number, unknown>;
}

/**
 * Which values are kept: seen twice, dense in tokens (where a scan spends its time; a message's text is scanned at
 * memory speed anyway), found by a hash of their first bytes, with 4 MiB of bytes kept at most.
 */
const segmentLimits = {
  prefixBytes: 128,
  minBytes: 256,
  maxBytes: 256 * 1024,
  minTokens: 64,
  bytesPerToken: 32,
  totalBytes: 4 * 1024 * 1024,
  perPrefix: 8,
};
/** Kept values by the hash of their first bytes (the same for many), the newest first; least recently kept first. */
const segments = new Map<number, Segment[]>();
const noSegments: Segment[] = [];
let segmentBytes = 0;
let copiedSegments = 0;
/**
 * Values seen once, by what their scan told of them for free: their first bytes' hash, length, tokens and compact
 * code points (no hash of all their bytes, which a value that never recurs, e.g. a conversation of short messages,
 * would pay on every call); 1,024 at most. A value that only looks the same is kept once for nothing, never mistaken:
 * what is kept is the bytes scanned, and a kept value is taken only for the same bytes.
 */
const sightings = new Set<string>();

/** Notes a value scanned from token `first` at byte `at`; the second time it is seen, keeps its tokens. */
function sighted(
  scanner: Scanner,
  prefix: number,
  first: number,
  at: number,
  facts: Pick<Segment, "depth" | "numberExcess">,
): void {
  const end = scanner.at;
  const tokens = scanner.count - first;
  const sighting = `${prefix} ${end - at} ${tokens} ${scanner.columns.compact[first]}`;
  if (!sightings.delete(sighting)) {
    sightings.add(sighting);
    if (sightings.size > 1024) sightings.delete(sightings.values().next().value as string);
    return;
  }
  const columns = tokenColumns(tokens, true);
  moveTokens(scanner.columns, first, columns, 0, tokens, -at);
  const bytes = scanner.bytes.slice(at, end);
  const segment: Segment = { bytes, aligned: [bytes], columns, values: new Map(), ...facts };
  const kept = segments.get(prefix) ?? [];
  segments.delete(prefix);
  segments.set(prefix, [segment, ...kept.slice(0, segmentLimits.perPrefix - 1)]);
  segmentBytes += end - at;
  for (const dropped of kept.slice(segmentLimits.perPrefix - 1)) segmentBytes -= heldBytes(dropped);
  keepWithinLimit();
}

/**
 * Copies `count` tokens of `from`, from token `first` on, into `into` at token `to`: their byte offsets moved by
 * `bytes`, and the token each one's subtree ends before (`next`) by as many tokens as they move.
 */
function moveTokens(from: TapeColumns, first: number, into: TapeColumns, to: number, count: number, bytes: number) {
  into.kind.set(from.kind.subarray(first, first + count), to);
  into.size.set(from.size.subarray(first, first + count), to);
  into.compact.set(from.compact.subarray(first, first + count), to);
  into.flags.set(from.flags.subarray(first, first + count), to);
  const tokens = to - first;
  for (let token = 0; token < count; token++) {
    into.start[to + token] = (from.start[first + token] as number) + bytes;
    into.end[to + token] = (from.end[first + token] as number) + bytes;
    into.next[to + token] = (from.next[first + token] as number) + tokens;
  }
}

/** Forgets the values kept longest until the rest hold no more than the limit. */
function keepWithinLimit(): void {
  for (const [oldest, list] of segments) {
    if (segmentBytes <= segmentLimits.totalBytes) break;
    segments.delete(oldest);
    for (const dropped of list) segmentBytes -= heldBytes(dropped);
  }
}

/** The bytes a kept value holds, its copies included. */
function heldBytes(segment: Segment): number {
  let bytes = 0;
  for (const copy of segment.aligned) bytes += copy?.length ?? 0;
  return bytes;
}

/** A copy of `bytes` that starts `alignment` bytes into a word. */
function alignedCopy(bytes: Uint8Array, alignment: number): Uint8Array {
  const copy = new Uint8Array(new ArrayBuffer(bytes.length + alignment), alignment, bytes.length);
  copy.set(bytes);
  return copy;
}

/** How many kept values have been copied into tapes (tests tell a copy from a scan by it). */
export function segmentCopies(): number {
  return copiedSegments;
}

/** The bytes the kept values hold, their copies included (a test holds them to the limit). */
export function segmentBytesKept(): number {
  return segmentBytes;
}

/** Forgets every kept value and sighting (tests compare scans with and without them). */
export function forgetSegments(): void {
  segments.clear();
  sightings.clear();
  segmentBytes = 0;
}

class Scanner {
  readonly bytes: Uint8Array;
  readonly length: number;
  at = 0;
  count = 0;
  columns: TapeColumns;
  numberExcess = 0;
  /** Keys decoded while scanning (for duplicates), kept for the readers of the tape. */
  readonly keys = new Map<number, string>();

  /** The bytes as 32-bit words, when their offset lets them be read so. */
  readonly words: Uint32Array | undefined;
  /** Whether the body's UTF-8 is checked already (see `useUtf8Check`). */
  checkedUtf8 = false;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.length = bytes.length;
    this.words =
      bytes.byteOffset % 4 === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2) : undefined;
    // About one token per 32 bytes, as in a call of text and a schema; a body denser in tokens grows its tape.
    this.columns = tokenColumns(64 + Math.min(bytes.length >> 5, 8192));
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
    const columns = tokenColumns(old.kind.length * 2);
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
    const checkedUtf8 = this.checkedUtf8;
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
            let unit = this.hex4(at + 2);
            if (unit < 0) return false;
            at += 6;
            if (unit >= 0xd800 && unit <= 0xdbff && bytes[at] === backslash && bytes[at + 1] === 0x75) {
              const low = this.hex4(at + 2);
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
        at = textRun(bytes, words, at, length);
        chars += at - text - runContinuations;
        compact += at - text - runContinuations;
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
      } else width = this.utf8Width(at, byte);
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

  /** The value of four hex digits at `at`, or -1. */
  hex4(at: number): number {
    let unit = 0;
    for (let index = at; index < at + 4; index++) {
      const byte = this.bytes[index];
      const digit = byte === undefined || byte >= 128 ? -1 : (hexValue[byte] as number);
      if (digit < 0) return -1;
      unit = unit * 16 + digit;
    }
    return unit;
  }

  /** The byte length of the well-formed UTF-8 sequence of lead byte `lead` at `at`, or 0 (as a fatal TextDecoder refuses it). */
  utf8Width(at: number, lead: number): number {
    const bytes = this.bytes;
    const second = bytes[at + 1] ?? 0;
    if (lead >= 0xc2 && lead <= 0xdf) return (second & 0xc0) === 0x80 ? 2 : 0;
    if (lead >= 0xe0 && lead <= 0xef) {
      const low = lead === 0xe0 ? 0xa0 : 0x80;
      const high = lead === 0xed ? 0x9f : 0xbf;
      if (second < low || second > high) return 0;
      return ((bytes[at + 2] ?? 0) & 0xc0) === 0x80 ? 3 : 0;
    }
    if (lead >= 0xf0 && lead <= 0xf4) {
      const low = lead === 0xf0 ? 0x90 : 0x80;
      const high = lead === 0xf4 ? 0x8f : 0xbf;
      if (second < low || second > high) return 0;
      return ((bytes[at + 2] ?? 0) & 0xc0) === 0x80 && ((bytes[at + 3] ?? 0) & 0xc0) === 0x80 ? 4 : 0;
    }
    return 0;
  }

  array(depth: number): boolean {
    if (depth > this.maxDepth) return false;
    if (depth > this.deepest) this.deepest = depth;
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
    if (depth > this.maxDepth) return false;
    if (depth > this.deepest) this.deepest = depth;
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

  maxDepth = 0;
  /** The deepest nesting met so far. */
  deepest = 0;
  /** The values copied from kept ones. */
  copied: Copied[] = [];

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
    const prefix = bytesHash(bytes, at, at + segmentLimits.prefixBytes);
    const alignment = (bytes.byteOffset + at) & 3;
    for (const segment of segments.get(prefix) ?? noSegments) {
      const length = segment.bytes.length;
      if (length > this.length - at || segment.bytes[length - 1] !== bytes[at + length - 1]) continue;
      const aligned = segment.aligned[alignment];
      if (!sameBytes(aligned ?? segment.bytes, bytes, at, at + length)) continue;
      // Found at an alignment it has no copy for: one is made now, for the next body like this one (a value that only
      // looks the same costs none).
      if (aligned === undefined) {
        segment.aligned[alignment] = alignedCopy(segment.bytes, alignment);
        segmentBytes += length;
        keepWithinLimit();
      }
      // Its nesting counts from here as it did where it was scanned: too deep here, the scan below refuses it.
      if (1 + segment.depth <= this.maxDepth) {
        this.copy(segment, at);
        return true;
      }
    }
    const first = this.count;
    const deepest = this.deepest;
    const numberExcess = this.numberExcess;
    this.deepest = 0;
    if (!this.value(1)) return false;
    const depth = this.deepest - 1;
    this.deepest = Math.max(deepest, this.deepest);
    const tokens = this.count - first;
    const length = this.at - at;
    if (
      tokens >= segmentLimits.minTokens &&
      length <= segmentLimits.maxBytes &&
      length <= tokens * segmentLimits.bytesPerToken
    ) {
      sighted(this, prefix, first, at, { depth, numberExcess: this.numberExcess - numberExcess });
    }
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
    copiedSegments++;
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

// ignoreBOM: true keeps a U+FEFF that opens a string's text (a key "\uFEFFmodel" is not "model"); the body's own byte
// order mark is skipped by the scan, as the parsing path's decoder drops it.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** How many short texts `internedText` remembers (a power of two), and the longest it takes. */
const internedSlots = 1024;
const internedMaxLength = 32;
/** Short ASCII texts decoded before, by a hash of their bytes; a text whose hash is another's replaces it. */
const internedTexts: (string | undefined)[] = new Array(internedSlots).fill(undefined);

/**
 * The text of the ASCII bytes `from`..`to` (at most `internedMaxLength` of them), the same string each time they
 * recur: a call's keys (`role`, `content`, `type`) and closed values (`user`, `object`) come back in every call, and
 * decoding them anew made a string, a view and a map entry for each. Bounded: a body of ever new keys only
 * replaces texts, at most 1,024 of at most 32 characters.
 */
function internedText(bytes: Uint8Array, from: number, to: number): string {
  let hash = 0x811c9dc5;
  for (let index = from; index < to; index++) hash = Math.imul(hash ^ (bytes[index] as number), 0x01000193);
  const slot = hash & (internedSlots - 1);
  const known = internedTexts[slot];
  if (known !== undefined && known.length === to - from) {
    let index = 0;
    while (index < known.length && known.charCodeAt(index) === bytes[from + index]) index++;
    if (index === known.length) return known;
  }
  const text = String.fromCharCode.apply(null, bytes.subarray(from, to) as unknown as number[]);
  internedTexts[slot] = text;
  return text;
}

/** Whether a string token (quotes included in `start`..`end`) is interned: ASCII without escapes, and short. */
function isInterned(flags: number, start: number, end: number): boolean {
  return flags === 0 && end - start - 2 <= internedMaxLength;
}

/** The text of a scanned string token's bytes, quotes included in `start`..`end`. */
function decodeString(bytes: Uint8Array, start: number, end: number, flags: number): string {
  if (isInterned(flags, start, end)) return internedText(bytes, start + 1, end - 1);
  if (flags === 0 && end - start <= 66) {
    return String.fromCharCode.apply(null, bytes.subarray(start + 1, end - 1) as unknown as number[]);
  }
  if ((flags & escapeFlag) === 0) return decoder.decode(bytes.subarray(start + 1, end - 1));
  return JSON.parse(decoder.decode(bytes.subarray(start, end))) as string;
}

/**
 * Scans `bytes` into a tape, or undefined when they are not a JSON object the scanner is sure of
 * (invalid UTF-8 or JSON, another top-level value, nesting past `maxDepth`, a duplicate key, more
 * values than a tape holds): the caller then defers to the parser.
 */
export function scanJson(bytes: Uint8Array, maxDepth: number): Tape | undefined {
  const scanner = new Scanner(bytes);
  scanner.maxDepth = maxDepth;
  if (utf8Check !== undefined) {
    if (!utf8Check(bytes)) return undefined;
    scanner.checkedUtf8 = true;
  }
  // A byte order mark is dropped, as the decoder of the parsing path drops it.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) scanner.at = 3;
  scanner.skipSpace();
  try {
    if (bytes[scanner.at] !== 0x7b || !scanner.value(0)) return undefined;
  } catch (error) {
    if (error === tooManyTokens) return undefined;
    throw error;
  }
  scanner.skipSpace();
  if (scanner.at !== bytes.length) return undefined;
  // Named one by one: a spread of the columns made this return a tenth of a short call's scan.
  const { kind, start, end, next, size, compact, flags } = scanner.columns;
  const { count, numberExcess, keys, copied } = scanner;
  return { kind, start, end, next, size, compact, flags, bytes, count, numberExcess, keys, copied };
}

/** The decoded name of a key token, remembered on the tape. */
export function keyOf(tape: Tape, index: number): string {
  return decodedKey(tape.keys, tape.bytes, tape, index);
}

/** A key token's text: a short ASCII one interned, another from `keys`, decoded and kept there the first time. */
function decodedKey(keys: Map<number, string>, bytes: Uint8Array, columns: TapeColumns, index: number): string {
  const start = columns.start[index] as number;
  const end = columns.end[index] as number;
  const flags = columns.flags[index] as number;
  if (isInterned(flags, start, end)) return internedText(bytes, start + 1, end - 1);
  let name = keys.get(index);
  if (name === undefined) {
    name = decodeString(bytes, start, end, flags);
    keys.set(index, name);
  }
  return name;
}

/** The decoded text of a string token. */
export function tapeString(tape: Tape, index: number): string {
  return decodeString(tape.bytes, tape.start[index] as number, tape.end[index] as number, tape.flags[index] as number);
}

/** The parsed value of a token and its subtree, as `JSON.parse` gives it. */
export function tapeValue(tape: Tape, index: number): unknown {
  if (tape.kind[index] === TapeKind.String) return tapeString(tape, index);
  return JSON.parse(decoder.decode(tape.bytes.subarray(tape.start[index], tape.end[index])));
}

/** A recurring value's bytes (a copy) and its parsed value (see `recurringValue`). */
interface Recurring {
  bytes: Uint8Array;
  value: unknown;
}
/** Recurring values by the hash of their bytes, least recently used first. */
const recurring = new Map<number, Recurring>();
/** Values of 128 bytes to 64 KiB are kept, 4 MiB of them at most (their parsed values take a few times that). */
const recurringLimits = { minBytes: 128, maxBytes: 64 * 1024, totalBytes: 4 * 1024 * 1024 };
/** Bytes of the values kept. */
let recurringBytes = 0;

/**
 * The parsed value of a token that recurs from call to call with the same bytes (a response schema, a
 * tool declaration): the same object each time its bytes recur, so that what is derived from it once
 * (its compact JSON, its compiled validator, its projection) is found again without parsing it. One
 * object serves many calls, so it is never changed in place, as no parsed JSON is here (every
 * transform copies; see compact-json.ts). Not frozen: a validator may mark a schema object (see
 * schema-validators.ts). An entry is found by a hash of the bytes and taken only when its bytes are
 * the same (bytes whose hash is another's replace it), compared as bytes: a string key would cost V8's
 * hash of every character, and decoding the bytes to compare them as text a new string on every call.
 */
export function recurringValue(tape: Tape, index: number): unknown {
  const start = tape.start[index] as number;
  const end = tape.end[index] as number;
  const length = end - start;
  if (
    (tape.kind[index] as number) > TapeKind.Array ||
    length < recurringLimits.minBytes ||
    length > recurringLimits.maxBytes
  ) {
    return tapeValue(tape, index);
  }
  // In a value copied from a kept one, the same token holds the same bytes: its value is kept there too, and found
  // again without hashing them.
  for (const { first, segment } of tape.copied) {
    const token = index - first;
    if (token < 0 || token >= segment.columns.kind.length) continue;
    let value = segment.values.get(token);
    if (value === undefined) {
      value = hashedValue(tape, start, end);
      segment.values.set(token, value);
    }
    return value;
  }
  return hashedValue(tape, start, end);
}

/** The recurring value of the bytes from `start` to `end`, found by their hash (see `recurringValue`). */
function hashedValue(tape: Tape, start: number, end: number): unknown {
  const length = end - start;
  const hash = bytesHash(tape.bytes, start, end);
  let entry = recurring.get(hash);
  if (entry !== undefined) {
    recurring.delete(hash);
    if (!sameBytes(entry.bytes, tape.bytes, start, end)) {
      recurringBytes -= entry.bytes.length;
      entry = undefined;
    }
  }
  if (entry === undefined) {
    const bytes = tape.bytes.slice(start, end);
    entry = { bytes, value: JSON.parse(decoder.decode(bytes)) };
    recurringBytes += length;
    for (const [oldest, { bytes: kept }] of recurring) {
      if (recurringBytes <= recurringLimits.totalBytes) break;
      recurring.delete(oldest);
      recurringBytes -= kept.length;
    }
  }
  recurring.set(hash, entry);
  return entry.value;
}

/** Whether `kept` holds the bytes of `bytes` from `start` to `end`, four at a time where both fall alike on words. */
function sameBytes(kept: Uint8Array, bytes: Uint8Array, start: number, end: number): boolean {
  const length = end - start;
  if (kept.length !== length) return false;
  let at = 0;
  const offset = bytes.byteOffset + start;
  if (((offset - kept.byteOffset) & 3) === 0) {
    for (; ((offset + at) & 3) !== 0 && at < length; at++) if (kept[at] !== bytes[start + at]) return false;
    const words = (length - at) >> 2;
    const left = new Uint32Array(kept.buffer, kept.byteOffset + at, words);
    const right = new Uint32Array(bytes.buffer, offset + at, words);
    for (let word = 0; word < words; word++) if (left[word] !== right[word]) return false;
    at += words << 2;
  }
  for (; at < length; at++) if (kept[at] !== bytes[start + at]) return false;
  return true;
}

/** FNV-1a in four lanes (a byte each, combined at the end), about three times the speed of one lane. */
function bytesHash(bytes: Uint8Array, start: number, end: number): number {
  let a = 0x811c9dc5 | 0;
  let b = a;
  let c = a;
  let d = a;
  let at = start;
  for (; at + 3 < end; at += 4) {
    a = Math.imul(a ^ (bytes[at] as number), 16777619);
    b = Math.imul(b ^ (bytes[at + 1] as number), 16777619);
    c = Math.imul(c ^ (bytes[at + 2] as number), 16777619);
    d = Math.imul(d ^ (bytes[at + 3] as number), 16777619);
  }
  for (; at < end; at++) a = Math.imul(a ^ (bytes[at] as number), 16777619);
  return (a ^ Math.imul(b, 3) ^ Math.imul(c, 5) ^ Math.imul(d, 7) ^ (end - start)) >>> 0;
}

/** A string of a tape as a text of a call: its code points counted by the scan, its characters decoded when read. */
export class TapeText {
  readonly chars: number;
  readonly #tape: Tape;
  readonly #index: number;
  #text: string | undefined;

  constructor(tape: Tape, index: number) {
    this.chars = tape.size[index] as number;
    this.#tape = tape;
    this.#index = index;
  }

  get text(): string {
    this.#text ??= tapeString(this.#tape, this.#index);
    return this.#text;
  }

  /**
   * Whether the text holds the ASCII character `ascii`: without an escape, exactly when its bytes hold that byte
   * (no byte of a longer UTF-8 sequence is ASCII), found by the native search; with one, in the decoded text.
   */
  holds(ascii: string): boolean {
    if (this.#text !== undefined || ((this.#tape.flags[this.#index] as number) & escapeFlag) !== 0) {
      return this.text.includes(ascii);
    }
    // Within the string's own bytes: a search to the body's end would cost a text without the character the rest of
    // the body, once per text.
    const start = (this.#tape.start[this.#index] as number) + 1;
    const end = (this.#tape.end[this.#index] as number) - 1;
    return this.#tape.bytes.subarray(start, end).indexOf(ascii.charCodeAt(0)) !== -1;
  }
}

/** Whether key token `key` names `name`, compared without decoding the key where its bytes tell. */
export function keyIs(tape: Tape, key: number, name: string): boolean {
  const start = (tape.start[key] as number) + 1;
  const length = (tape.end[key] as number) - 1 - start;
  if (tape.flags[key] !== 0) return keyOf(tape, key) === name;
  if (length !== name.length) return false;
  const bytes = tape.bytes;
  for (let index = 0; index < length; index++) if (bytes[start + index] !== name.charCodeAt(index)) return false;
  return true;
}

/** The token of the value of member `name` of the object token `object`, or -1 when it has none. */
export function memberToken(tape: Tape, object: number, name: string): number {
  const end = tape.next[object] as number;
  for (let key = object + 1; key < end; key = tape.next[key + 1] as number) {
    if (keyIs(tape, key, name)) return key + 1;
  }
  return -1;
}

/** The parsed value of member `name` of the object token `object`, undefined when it has none. */
export function memberValue(tape: Tape, object: number, name: string): unknown {
  const token = memberToken(tape, object, name);
  return token < 0 ? undefined : tapeValue(tape, token);
}

/** Where a lazy object's members are read from: a member no spread, `Object.keys` or `JSON.stringify` sees. */
const lazySource = Symbol("lazy source");

interface LazySource {
  tape: Tape;
  object: number;
}

/**
 * Member accessors by name, shared by every lazy object: an accessor property whose functions are the same as the
 * last object's keeps V8's hidden class and its cached transitions, where new functions per object would turn each
 * object into a dictionary (about 5 µs for a call's four members). Names past `sharedNameLength` characters, and
 * any once `sharedNames` are kept, get accessors of their own: read the same, in an object that is a dictionary.
 */
const memberAccessors = new Map<string, PropertyDescriptor>();
const sharedNames = 1_024;
const sharedNameLength = 64;

/** Replaces a lazy member by its value: a data member, as `JSON.parse` makes. */
function settle(object: object, name: string, value: unknown): void {
  Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
}

function memberAccessor(name: string): PropertyDescriptor {
  const shared = memberAccessors.get(name);
  if (shared !== undefined) return shared;
  const accessor: PropertyDescriptor = {
    configurable: true,
    enumerable: true,
    get(this: { [lazySource]: LazySource }) {
      const { tape, object } = this[lazySource];
      const parsed = memberValue(tape, object, name);
      settle(this, name, parsed);
      return parsed;
    },
    set(this: object, replaced: unknown) {
      settle(this, name, replaced);
    },
  };
  if (memberAccessors.size < sharedNames && name.length <= sharedNameLength) memberAccessors.set(name, accessor);
  return accessor;
}

/**
 * The top-level object of a tape as a parsed object whose members are parsed one by one, each when
 * first read: reading `body.stream` parses that member alone, spreading or serializing the object
 * parses them all. Its members are what `JSON.parse` gives, in the same order.
 */
export function lazyObject(tape: Tape, object = 0): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  Object.defineProperty(fields, lazySource, { value: { tape, object } satisfies LazySource });
  const end = tape.next[object] as number;
  for (let key = object + 1; key < end; key = tape.next[key + 1] as number) {
    const name = keyOf(tape, key);
    Object.defineProperty(fields, name, memberAccessor(name));
  }
  return fields;
}
