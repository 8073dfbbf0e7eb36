import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fragment, pageOf, pagesOf, pagingOf } from "../../src/window/fragment.js";
import { maxPageChars, minPageChars } from "../../src/window/index.js";

// Issue 51, item 5: a page holds at least 200 code points, and a recall cuts only the page it answers. Pure, so it
// runs on Node and in workerd; the oracle is Array.from for code points.

/** Texts of BMP runs, surrogate pairs and lone surrogates, long enough to make many pages. */
const piece = fc.oneof(
  fc.nat({ max: 3_000 }).map((length) => "x".repeat(length)),
  fc.constantFrom("😀", "𝄞", "ä", "\ud800", "\udc00", '"', "\\"),
  fc.string({ unit: "binary", maxLength: 40 }),
);
const text = fc.array(piece, { maxLength: 60 }).map((pieces) => pieces.join(""));

describe("pages of a serialized result", () => {
  it("cuts one page alone exactly as it cuts them all, at any page size", async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.integer({ min: 1, max: 5_000 }), async (serialized, pageChars) => {
        const points = Array.from(serialized);
        const all = await pagesOf(serialized, pageChars);
        expect(pagingOf(serialized, pageChars)).toEqual({
          total: points.length,
          pages: Math.max(1, Math.ceil(points.length / pageChars)),
        });
        expect(all.map((page) => page.text).join("")).toBe(serialized);
        for (const [index, page] of all.entries()) {
          expect(page.text).toBe(points.slice(index * pageChars, (index + 1) * pageChars).join(""));
        }
        const probes = new Set([0, all.length - 1, Math.floor(all.length / 3)]);
        for (const index of probes) expect(await pageOf(serialized, pageChars, index)).toEqual(all[index]);
        for (const outside of [-1, all.length, 0.5])
          expect(await pageOf(serialized, pageChars, outside)).toBeUndefined();
      }),
      { numRuns: 150 },
    );
  });

  it("takes page sizes from 200 to 1,000,000 code points only", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -10, max: 2_000_010 }), async (pageChars) => {
        const cut = fragment({ rows: [1, 2, 3] }, { pageChars });
        if (pageChars >= minPageChars && pageChars <= maxPageChars) await expect(cut).resolves.toHaveLength(1);
        else await expect(cut).rejects.toThrow(TypeError);
      }),
      { numRuns: 200 },
    );
  });

  it("recalls page 900,000 of a 1.8 MB text kept with pages of 2, without cutting the others", async () => {
    const serialized = "😀é".repeat(900_000);
    const started = performance.now();
    const page = await pageOf(serialized, 2, 900_000 - 1);
    expect(page).toMatchObject({ page: 899_999, pages: 900_000, offset: 1_799_998, total_chars: 1_800_000 });
    expect(page?.text).toBe("😀é");
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
