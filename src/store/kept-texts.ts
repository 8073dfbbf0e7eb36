const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The size of the buffers that kept texts share. */
const chunkBytes = 256 * 1024;

/**
 * Texts kept for long as UTF-8 bytes in shared buffers, outside V8's heap. A text held as a string for thousands
 * of calls is copied twice on its way into the old generation, and a full collection marks and may move it; the
 * bytes of a buffer cost the collector nothing. Each text is a view of the buffer it was written to, which lives as
 * long as one of its texts is kept: texts dropped oldest first free their buffers in order.
 */
export class KeptTexts {
  #chunk = new Uint8Array(0);
  #at = 0;

  /**
   * Writes `text` to the current buffer, or to a new one where it may not fit, and returns its bytes. The text must
   * be well-formed UTF-16, as `JSON.stringify` writes it: UTF-8 has no lone surrogate, which would read back as U+FFFD.
   */
  keep(text: string): Uint8Array {
    // A UTF-16 code unit takes at most three bytes of UTF-8.
    const most = text.length * 3;
    if (most > this.#chunk.length - this.#at) {
      if (most > chunkBytes / 4) return encoder.encode(text);
      this.#chunk = new Uint8Array(chunkBytes);
      this.#at = 0;
    }
    const { written } = encoder.encodeInto(text, this.#chunk.subarray(this.#at));
    const bytes = this.#chunk.subarray(this.#at, this.#at + written);
    this.#at += written;
    return bytes;
  }
}

/** The text of bytes that `KeptTexts.keep` returned. */
export function keptText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
