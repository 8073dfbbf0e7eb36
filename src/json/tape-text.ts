import { escapeFlag, type Tape } from "./tape.js";
import { tapeString } from "./tape-values.js";

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
