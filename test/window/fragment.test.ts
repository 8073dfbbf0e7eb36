import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pageOf, pagesOf } from "../../src/window/fragment.js";
import { checkpointDue, fragment, minPageChars } from "../../src/window/index.js";

// Seed 001's pages of a large result, against an oracle written apart from the code: JSON.stringify, Array.from
// for code points, node:crypto for the hash.

const astral = fc.constantFrom("😀", "𝄞", "🇩🇪", "ä", "ß", "\u0000", '"', "\\", "\ud800");
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.array(astral, { maxLength: 40 }).map((parts) => parts.join("")),
  fc.nat({ max: 5_000 }).map((length) => "x".repeat(length)),
);
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(text, tie("value"), { maxKeys: 6 }),
  ),
})).value;

describe("fragment", () => {
  // Pages of any size are cut alike: the property reaches small sizes through pagesOf, below fragment's minimum.
  it("cuts the compact JSON into pages whose texts concatenate to it exactly, each at most pageChars code points", async () => {
    await fc.assert(
      fc.asyncProperty(value, fc.integer({ min: 1, max: 2_000 }), async (input, pageChars) => {
        const serialized = JSON.stringify(input);
        const points = Array.from(serialized);
        const pages = await pagesOf(serialized, pageChars);
        if (pageChars >= minPageChars) expect(await fragment(input, { pageChars })).toEqual(pages);
        expect(pages.map((page) => page.text).join("")).toBe(serialized);
        expect(pages).toHaveLength(Math.max(1, Math.ceil(points.length / pageChars)));
        const sha256 = createHash("sha256").update(serialized, "utf8").digest("hex");
        let offset = 0;
        for (const [index, page] of pages.entries()) {
          const length = Array.from(page.text).length;
          expect(page).toMatchObject({ type: "json_fragment", page: index, pages: pages.length, offset, sha256 });
          expect(page.total_chars).toBe(points.length);
          expect(length).toBeLessThanOrEqual(pageChars);
          if (index < pages.length - 1) expect(length).toBe(pageChars);
          // Never half a surrogate pair at a cut.
          expect(page.text).toBe(points.slice(offset, offset + length).join(""));
          offset += length;
        }
        for (const index of new Set([0, pages.length - 1, Math.floor(pages.length / 2)])) {
          expect(await pageOf(serialized, pageChars, index)).toEqual(pages[index]);
        }
        expect(await pageOf(serialized, pageChars, pages.length)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it("pages at 1,600 code points by default, and refuses a page size or value it cannot take", async () => {
    const pages = await fragment({ text: "😀".repeat(4_000) });
    expect(pages.map((page) => Array.from(page.text).length)).toEqual([1600, 1600, 811]);
    await expect(fragment(undefined)).rejects.toThrow(TypeError);
    await expect(fragment("x", { pageChars: 0 })).rejects.toThrow(TypeError);
    await expect(fragment("x", { pageChars: minPageChars - 1 })).rejects.toThrow(TypeError);
    expect(await fragment("x", { pageChars: minPageChars })).toHaveLength(1);
    await expect(fragment("x", { pageChars: 1.5 })).rejects.toThrow(TypeError);
  });
});

describe("checkpointDue", () => {
  it("advises a checkpoint above 4,000 bytes of results or 2,000 of log, or the limits given", () => {
    expect(checkpointDue({ resultsBytes: 4000, logBytes: 2000 })).toBe(false);
    expect(checkpointDue({ resultsBytes: 4001, logBytes: 0 })).toBe(true);
    expect(checkpointDue({ resultsBytes: 0, logBytes: 2001 })).toBe(true);
    expect(checkpointDue({ resultsBytes: 500, logBytes: 0 }, { resultsBytes: 400 })).toBe(true);
  });
});
