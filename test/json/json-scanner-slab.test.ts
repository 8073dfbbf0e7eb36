import { describe, it } from "vitest";
import { maxNestingDepth } from "../../src/http/read-body.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { expectSameTape, scannerUnderTest } from "../support/json-scanner.js";

/*
 * Tapes of calls in flight are cut from one slab of memory (see `ColumnSlab`): each stays as it was scanned however
 * many are cut after it. The reference is a scan by a scanner of its own, whose slab holds that tape alone.
 */

const encoder = new TextEncoder();
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
