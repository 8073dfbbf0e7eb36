import { decodedKey, decoder, decodeString } from "./decode-text.js";
import { type Tape, TapeKind } from "./tape.js";

/** Reading a tape's keys and values: decoded or parsed one at a time, where a reader asks for one. */

/** The decoded name of a key token, remembered on the tape. */
export function keyOf(tape: Tape, index: number): string {
  return decodedKey(tape.keys, tape.bytes, tape, index);
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

/** Whether key token `key` names `name`, compared without decoding the key where its bytes tell. */
function keyIs(tape: Tape, key: number, name: string): boolean {
  const start = (tape.start[key] as number) + 1;
  const length = (tape.end[key] as number) - 1 - start;
  if (tape.flags[key] !== 0) return keyOf(tape, key) === name;
  if (length !== name.length) return false;
  const bytes = tape.bytes;
  for (let index = 0; index < length; index++) if (bytes[start + index] !== name.charCodeAt(index)) return false;
  return true;
}

/** The first UTF-16 unit of key token `key`'s name (NaN for ""), read from its bytes where they are its text. */
export function keyFirstUnit(tape: Tape, key: number): number {
  if (tape.flags[key] !== 0) return keyOf(tape, key).charCodeAt(0);
  const start = (tape.start[key] as number) + 1;
  return start < (tape.end[key] as number) - 1 ? (tape.bytes[start] as number) : Number.NaN;
}

/**
 * Values by name, found for a key token by comparing its bytes: a key without escapes or bytes past ASCII (nearly
 * every key) is never decoded to look it up.
 */
export class KeyTable<T> {
  readonly #byName = new Map<string, T>();
  /** The ASCII names by length, each with its value. */
  readonly #byLength = new Map<number, { name: string; value: T }[]>();

  constructor(entries: Iterable<readonly [string, T]>) {
    for (const [name, value] of entries) {
      this.#byName.set(name, value);
      // Only an ASCII name can equal a key's bytes (a key of other text is decoded).
      if (/[\u0080-\uffff]/.test(name)) continue;
      const list = this.#byLength.get(name.length) ?? [];
      list.push({ name, value });
      this.#byLength.set(name.length, list);
    }
  }

  get size(): number {
    return this.#byName.size;
  }

  /** The value of key token `key`'s name, undefined when the table has none. */
  find(tape: Tape, key: number): T | undefined {
    if (tape.flags[key] !== 0) return this.#byName.get(keyOf(tape, key));
    const start = (tape.start[key] as number) + 1;
    const candidates = this.#byLength.get((tape.end[key] as number) - 1 - start);
    if (candidates === undefined) return undefined;
    const bytes = tape.bytes;
    for (const { name, value } of candidates) {
      let index = 0;
      while (index < name.length && bytes[start + index] === name.charCodeAt(index)) index++;
      if (index === name.length) return value;
    }
    return undefined;
  }
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
