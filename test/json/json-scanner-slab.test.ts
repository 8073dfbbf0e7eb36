import { describe, expect, it } from "vitest";
import { maxNestingDepth } from "../../src/http/read-body.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import type { Tape } from "../../src/json/tape.js";
import { scannerUnderTest } from "../support/json-scanner.js";

/*
 * Tapes of calls in flight are cut from one slab of memory (see `ColumnSlab`): each stays as it was scanned however
 * many are cut after it. The reference is a scan by a scanner of its own, whose slab holds that tape alone.
 */

const encoder = new TextEncoder();
const columns = ["kind", "start", "end", "next", "size", "compact", "flags"] as const;

/** Both refused, or the same tokens, counts and number excess. */
function expectSameTape(actual: Tape | undefined, expected: Tape | undefined): void {
  if (expected === undefined || actual === undefined) {
    expect(actual === undefined, "one scan refused what the other took").toBe(expected === undefined);
    return;
  }
  expect(actual.count).toBe(expected.count);
  expect(actual.numberExcess).toBe(expected.numberExcess);
  for (const column of columns) {
    const same = actual[column].subarray(0, actual.count).every((value, index) => value === expected[column][index]);
    if (!same) expect.fail(`column ${column} differs`);
  }
}

describe("tapes cut from one slab", () => {
  it("stay as scanned while later scans fill the slab and the next ones (400 tapes kept at once)", () => {
    // Sizes from a few bytes to three times past the largest columns a slab gives (4 KiB, a body of about 4 KB), and
    // bodies dense enough in tokens that their tape grows beyond its first columns.
    const bodies = Array.from({ length: 400 }, (_, index) => {
      const text = "ä".repeat((index * 97) % 6_000);
      const numbers = Array.from({ length: (index * 37) % 3_000 }, (_, item) => item % 10);
      return encoder.encode(JSON.stringify(index % 3 === 0 ? { n: numbers } : { t: text, i: index }));
    });
    const { scanner } = scannerUnderTest;
    const tapes = bodies.map((body) => scanner.scan(body, maxNestingDepth));
    for (const [index, body] of bodies.entries())
      expectSameTape(tapes[index], new JsonScanner().scan(body, maxNestingDepth));
  });
});
