import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maxNestingDepth, nestsDeeperThan, parseJsonBody } from "../../src/http/read-body.js";

/** The nesting depth of a parsed JSON value, by recursion (the reference the scan must agree with). */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (typeof value === "object" && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("the nesting guard", () => {
  it("agrees with the recursive depth for every limit, brackets inside strings included", () => {
    const text = fc.string({ unit: fc.constantFrom("{", "}", "[", "]", '"', "\\", "a", "é", "😀") });
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        text,
        fc.array(tie("node"), { maxLength: 3 }),
        fc.dictionary(text, tie("node"), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, fc.nat(12), (json, limit) => {
        expect(nestsDeeperThan(JSON.stringify(json), limit)).toBe(depthOf(json) > limit);
      }),
      { numRuns: 2_000 },
    );
  });

  it("passes exactly the limit and refuses one more", () => {
    expect(nestsDeeperThan(nested(maxNestingDepth), maxNestingDepth)).toBe(false);
    expect(nestsDeeperThan(nested(maxNestingDepth + 1), maxNestingDepth)).toBe(true);
    // Many brackets side by side are wide, not deep.
    expect(nestsDeeperThan(`[${"[],".repeat(5_000)}[]]`, maxNestingDepth)).toBe(false);
    // Brackets inside a string do not nest.
    expect(nestsDeeperThan(JSON.stringify({ text: "[".repeat(5_000) }), maxNestingDepth)).toBe(false);
  });

  it("refuses a deep body before parsing it, and reads a shallow one", () => {
    const deep = new TextEncoder().encode(`{"a":${nested(maxNestingDepth)}}`);
    expect(() => parseJsonBody(deep)).toThrow(/deeper than 512 levels/);
    expect(parseJsonBody(new TextEncoder().encode('{"a":[[1]]}')).body).toEqual({ a: [[1]] });
  });
});
