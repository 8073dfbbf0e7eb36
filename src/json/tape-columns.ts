import type { TapeColumns } from "./tape.js";

/** The bytes a token takes in a tape's columns: five 4-byte columns and two 1-byte ones. */
const tokenBytes = 22;
/** The size of a slab. */
const slabBytes = 16 * 1024;
/** The largest columns cut from a slab: a tape of 186 tokens, a body of about 4 KB. */
const slabbedBytes = 4 * 1024;

/**
 * Where a scanner's tape columns come from, each tape's in one piece of memory. A short tape's are cut from a slab:
 * an ArrayBuffer of its own costs about 2 µs to allocate however small it is, most of the scan of a short body
 * (3.8 µs for 30 bytes); views into a slab cost a twentieth of that. A slab's bytes are used once (fresh, so zero),
 * and it is freed with the last tape cut from it. Small, and for small tapes only, so that a call that lasts (a
 * stream) keeps no more than 16 KiB alive that it does not use; a larger tape's allocation costs little beside its
 * scan. One per scanner, whose scans run one at a time (a scan never yields).
 */
export class ColumnSlab {
  #slab = new ArrayBuffer(slabBytes);
  #used = 0;

  /** The columns of a tape of `capacity` tokens. */
  columns(capacity: number): TapeColumns {
    const bytes = capacity * tokenBytes;
    let buffer: ArrayBuffer;
    let offset = 0;
    if (bytes > slabbedBytes) buffer = new ArrayBuffer(bytes);
    else {
      if (this.#used + bytes > slabBytes) {
        this.#slab = new ArrayBuffer(slabBytes);
        this.#used = 0;
      }
      buffer = this.#slab;
      offset = this.#used;
      // The next columns start on an 8-byte boundary, as their 4-byte columns need.
      this.#used += (bytes + 7) & ~7;
    }
    return columnsIn(buffer, offset, capacity);
  }
}

/** The columns of `capacity` tokens in memory of their own: a kept value's, which outlive any call (see kept-segments.ts). */
export function ownColumns(capacity: number): TapeColumns {
  return columnsIn(new ArrayBuffer(capacity * tokenBytes), 0, capacity);
}

/** The columns of `capacity` tokens laid out in `buffer` from `offset` (a multiple of 8). */
function columnsIn(buffer: ArrayBuffer, offset: number, capacity: number): TapeColumns {
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
