import { bytesHash, sameBytes } from "./bytes-hash.js";
import { decoder } from "./decode-text.js";
import { type RecurringLookup, type Tape, TapeKind } from "./tape.js";
import { tapeValue } from "./tape-values.js";

/** A recurring value's bytes (a copy) and its parsed value, deep-frozen. */
interface Recurring {
  bytes: Uint8Array;
  value: unknown;
}

/** Values of 128 bytes to 64 KiB are kept, 4 MiB of them at most (their parsed values take a few times that). */
const recurringLimits = { minBytes: 128, maxBytes: 64 * 1024, totalBytes: 4 * 1024 * 1024 };

/**
 * The values that recur from call to call with the same bytes (a response schema, a tool declaration), parsed once:
 * the same object each time their bytes recur, so that what is derived from it once and keyed by its identity (its
 * compact JSON, its compiled validator, its projection, its canonical form) is found again without parsing it. One
 * per `JsonScanner` (each tape it makes holds it as `recurring`).
 *
 * One object serves many calls, so it is deep-frozen when it is kept: a caller that would change it in place fails
 * (a TypeError in strict-mode code) instead of changing every later call's value; every transform copies.
 *
 * An entry is found by a hash of the bytes and taken only when its bytes are the same (bytes whose hash is another's
 * replace it), compared as bytes: a string key would cost V8's hash of every character, and decoding the bytes to
 * compare them as text a new string on every call. Entries are dropped least recently used first.
 */
export class RecurringValues implements RecurringLookup {
  /** Entries by the hash of their bytes, least recently used first. */
  readonly #entries = new Map<number, Recurring>();
  /** Bytes of the values kept. */
  #bytes = 0;

  /** The value of token `index` of `tape`: kept (and frozen) when it is an object or array of a recurring size. */
  value(tape: Tape, index: number): unknown {
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
        value = this.#hashedValue(tape, start, end);
        segment.values.set(token, value);
      }
      return value;
    }
    return this.#hashedValue(tape, start, end);
  }

  /** The value of the bytes of `tape` from `start` to `end`, found by their hash. */
  #hashedValue(tape: Tape, start: number, end: number): unknown {
    const length = end - start;
    const hash = bytesHash(tape.bytes, start, end);
    const entries = this.#entries;
    let entry = entries.get(hash);
    if (entry !== undefined) {
      entries.delete(hash);
      if (!sameBytes(entry.bytes, tape.bytes, start, end)) {
        this.#bytes -= entry.bytes.length;
        entry = undefined;
      }
    }
    if (entry === undefined) {
      const bytes = tape.bytes.slice(start, end);
      entry = { bytes, value: deepFreeze(JSON.parse(decoder.decode(bytes))) };
      this.#bytes += length;
      for (const [oldest, { bytes: kept }] of entries) {
        if (this.#bytes <= recurringLimits.totalBytes) break;
        entries.delete(oldest);
        this.#bytes -= kept.length;
      }
    }
    entries.set(hash, entry);
    return entry.value;
  }
}

/** The parsed value of a token that may recur from call to call: see `RecurringValues`; frozen when kept. */
export function recurringValue(tape: Tape, index: number): unknown {
  return tape.recurring.value(tape, index);
}

/** `value` and every object and array in it frozen (a parse's fresh tree: no cycles, nothing frozen yet). */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
