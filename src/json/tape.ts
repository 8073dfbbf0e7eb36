/**
 * A JSON body read in one pass over its UTF-8 bytes, without decoding it into a string or parsing
 * it into objects: a tape of its values in document order, each with its byte range, the index
 * after its subtree, and what measurement needs of it: a string's code points, and every value's
 * code points as compact JSON (what `JSON.stringify` of its parsed value would write).
 * See json-scanner.ts for what makes one, and tape-values.ts, tape-text.ts and lazy-object.ts for its readers.
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
  /** `escapeFlag` when a string holds an escape, `wideFlag` when it holds a byte past ASCII. */
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
  /** The recurring values of the scanner that made it (see `recurringValue`). */
  recurring: RecurringLookup;
}

/** Where a tape's reader finds a recurring value (`RecurringValues` in recurring-values.ts). */
export interface RecurringLookup {
  /** The value of token `index` of `tape`, found again when its bytes recur. */
  value(tape: Tape, index: number): unknown;
}

/**
 * The tokens of a top-level member's value as its scan left them, for the next body that holds the same bytes there.
 * A value's tokens follow from its bytes alone (JSON's grammar has no context), so bytes found equal give the same
 * tokens, their offsets moved: what the scanner checks (UTF-8, grammar, keys once, nesting) holds for them as it held.
 */
export interface Segment {
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
  /** The recurring values found in it (see `RecurringValues`), by token from its first: found again without a hash. */
  values: Map<number, unknown>;
}

/** A value of a tape copied from a kept one: its first token and where it came from. */
export interface Copied {
  first: number;
  segment: Segment;
}

/** A string token's flag: it holds an escape. */
export const escapeFlag = 1;
/** A string token's flag: it holds a byte past ASCII. */
export const wideFlag = 2;

export const quote = 0x22;
export const backslash = 0x5c;
