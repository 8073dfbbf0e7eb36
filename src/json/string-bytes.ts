import { backslash, quote } from "./tape.js";

/** One character of a string's bytes: an escape's length as compact JSON, a `\u` escape's unit, a UTF-8 sequence. */

/** The compact JSON length of one code point inside a string, as `JSON.stringify` escapes it. */
export function escapedLength(codePoint: number): number {
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

const hexValue = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 10; digit++) hexValue[0x30 + digit] = digit;
for (let letter = 0; letter < 6; letter++) {
  hexValue[0x41 + letter] = 10 + letter;
  hexValue[0x61 + letter] = 10 + letter;
}

/** The value of the four hex digits of `bytes` at `at`, or -1. */
export function hex4(bytes: Uint8Array, at: number): number {
  let unit = 0;
  for (let index = at; index < at + 4; index++) {
    const byte = bytes[index];
    const digit = byte === undefined || byte >= 128 ? -1 : (hexValue[byte] as number);
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

/**
 * The byte length of the well-formed UTF-8 sequence of lead byte `lead` at `at` in `bytes`, or 0 (as a fatal
 * TextDecoder refuses it).
 */
export function utf8Width(bytes: Uint8Array, at: number, lead: number): number {
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
