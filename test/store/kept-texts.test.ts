import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeptTexts, keptText } from "../../src/store/kept-texts.js";

describe("KeptTexts", () => {
  it("reads back every text as written, however many share a buffer and whatever came after it", () => {
    fc.assert(
      fc.property(
        // Short and long texts, ASCII and beyond (two, three and four bytes of UTF-8), the long ones past a buffer.
        fc.array(
          fc.oneof(
            fc.string({ unit: "grapheme", maxLength: 200 }),
            fc.string({ unit: "binary", maxLength: 3_000 }),
            fc.integer({ min: 20_000, max: 300_000 }).map((length) => "ä😀x".repeat(Math.ceil(length / 4))),
          ),
          { maxLength: 60 },
        ),
        (texts) => {
          const kept = new KeptTexts();
          const written = texts.map((text) => kept.keep(JSON.stringify(text)));
          expect(written.map((bytes) => JSON.parse(keptText(bytes)))).toEqual(texts);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("fills one buffer with small texts, each its own bytes, before starting another", () => {
    const kept = new KeptTexts();
    const first = kept.keep("a".repeat(1_000));
    const texts = Array.from({ length: 2_000 }, (_, index) => kept.keep(`${index}`.repeat(100)));
    const sharing = texts.filter((bytes) => bytes.buffer === first.buffer);
    expect(sharing.length).toBeGreaterThan(500);
    expect(sharing.length).toBeLessThan(texts.length);
    for (const [index, bytes] of texts.entries()) expect(keptText(bytes)).toBe(`${index}`.repeat(100));
    expect(keptText(first)).toBe("a".repeat(1_000));
  });
});
