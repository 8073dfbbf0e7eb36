import { backslash, quote } from "./tape.js";

/**
 * Runs of a string's bytes that stand for themselves (no quote, backslash or control character), read four bytes at a
 * time where the body's bytes line up on 32-bit words.
 */

/** 1 for a byte that stands for itself in a string: ASCII but a control character, the quote and the backslash. */
export const plainText = new Uint8Array(256);
for (let byte = 0x20; byte < 0x80; byte++) plainText[byte] = byte === quote || byte === backslash ? 0 : 1;
/**
 * The same for a body whose UTF-8 is known to be well-formed (see `JsonScanner`): every byte past ASCII stands for
 * itself too, 2 for a continuation byte (0x80-0xBF), which adds no code point, 1 for a lead byte.
 */
const plainUtf8 = Uint8Array.from(plainText);
for (let byte = 0x80; byte < 0x100; byte++) plainUtf8[byte] = byte < 0xc0 ? 2 : 1;

/**
 * The end of the run of plain text bytes (see `plainText`) from `from`, found four bytes at a time from the first
 * word boundary on, with the classic tests for a byte below a bound; the byte loop finishes the run.
 */
export function plainWords(bytes: Uint8Array, words: Uint32Array, from: number, length: number): number {
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

/** Where `textRun` leaves the count of continuation bytes of the run it read. */
export interface RunCount {
  continuations: number;
}

/**
 * The end of the run of text from `from` in a body of checked UTF-8, where every byte past ASCII stands for itself:
 * four bytes at a time from the first word boundary on, counting the continuation bytes (10xxxxxx), which add no code
 * point, into `count`: in each byte's lane of `lanes`, summed every 255 words (a lane holds up to 255).
 */
export function textRun(
  bytes: Uint8Array,
  words: Uint32Array | undefined,
  from: number,
  length: number,
  count: RunCount,
): number {
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
  count.continuations = continuations;
  return at;
}
