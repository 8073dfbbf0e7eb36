import { KeptSegments } from "./kept-segments.js";
import { RecurringValues } from "./recurring-values.js";
import type { Tape } from "./tape.js";
import { ColumnSlab } from "./tape-columns.js";
import { TapeScan, tooManyTokens } from "./tape-scan.js";

/** A check of a whole body's UTF-8, exactly as strict as a fatal TextDecoder. */
export type Utf8Check = (bytes: Uint8Array) => boolean;

/**
 * Reads JSON bodies into tapes (see tape.ts). One per app or runtime: it holds the slab its short tapes' columns are
 * cut from (see `ColumnSlab`), the top-level values whose tokens it copies instead of scanning them again (see
 * `KeptSegments`), the values that recur from call to call (see `RecurringValues`; each tape it makes
 * holds them), and the runtime's UTF-8 check, if any.
 *
 * The scanner accepts only what it is sure of: valid UTF-8, valid JSON (the grammar `JSON.parse`
 * takes), a top-level object, nesting no deeper than the limit, and no key twice in one object.
 * Anything else returns undefined, and the caller defers to the parser, whose verdict (and error
 * message) then stands. Values are decoded one at a time, only where a reader asks for one.
 */
export class JsonScanner {
  readonly #slab = new ColumnSlab();
  readonly #recurring = new RecurringValues();
  readonly #segments = new KeptSegments();
  readonly #utf8Check: Utf8Check | undefined;

  /**
   * `utf8Check`: the runtime's check of a whole body's UTF-8 (Node's `buffer.isUtf8`, which runs at memory speed): a
   * body it passes is read with text past ASCII four bytes at a time, as ASCII is, and one it refuses goes to the
   * parser, whose decoder then refuses it. Without one (Workers), the scanner checks each sequence where it meets it.
   */
  constructor(utf8Check?: Utf8Check) {
    this.#utf8Check = utf8Check;
  }

  /**
   * Scans `bytes` into a tape, or undefined when they are not a JSON object the scanner is sure of
   * (invalid UTF-8 or JSON, another top-level value, nesting past `maxDepth`, a duplicate key, more
   * values than a tape holds): the caller then defers to the parser.
   */
  /** The bytes the top-level values it keeps hold (see `KeptSegments`): never more than 4 MiB. */
  keptBytes(): number {
    return this.#segments.keptBytes();
  }

  scan(bytes: Uint8Array, maxDepth: number): Tape | undefined {
    const check = this.#utf8Check;
    if (check !== undefined && !check(bytes)) return undefined;
    const scanner = new TapeScan(bytes, this.#slab, this.#segments, maxDepth, check !== undefined);
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
    const recurring = this.#recurring;
    return { kind, start, end, next, size, compact, flags, bytes, count, numberExcess, keys, copied, recurring };
  }
}
