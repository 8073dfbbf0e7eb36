import { escapeFlag, type TapeColumns } from "./tape.js";

// ignoreBOM: true keeps a U+FEFF that opens a string's text (a key "\uFEFFmodel" is not "model"); the body's own byte
// order mark is skipped by the scan, as the parsing path's decoder drops it.
export const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of a scanned string token's bytes, quotes included in `start`..`end`. */
export function decodeString(bytes: Uint8Array, start: number, end: number, flags: number): string {
  if (flags === 0 && end - start <= 66) {
    return String.fromCharCode.apply(null, bytes.subarray(start + 1, end - 1) as unknown as number[]);
  }
  if ((flags & escapeFlag) === 0) return decoder.decode(bytes.subarray(start + 1, end - 1));
  return JSON.parse(decoder.decode(bytes.subarray(start, end))) as string;
}

/** A key token's text from `keys`, decoded and kept there the first time. */
export function decodedKey(keys: Map<number, string>, bytes: Uint8Array, columns: TapeColumns, index: number): string {
  let name = keys.get(index);
  if (name === undefined) {
    name = decodeString(
      bytes,
      columns.start[index] as number,
      columns.end[index] as number,
      columns.flags[index] as number,
    );
    keys.set(index, name);
  }
  return name;
}
