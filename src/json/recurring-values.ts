import { decoder } from "./decode-text.js";
import { type Tape, TapeKind } from "./tape.js";
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
export class RecurringValues {
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
