import { expect } from "vitest";
import { JsonScanner } from "../../src/json/json-scanner.js";
import type { Tape } from "../../src/json/tape.js";

/**
 * The scanner the suites of test/json read bodies with: without a UTF-8 check, as on Workers, unless a file puts
 * another here before it imports them (json-tape-checked-utf8.test.ts: the Node gateway's, with `buffer.isUtf8`).
 */
export const scannerUnderTest = { scanner: new JsonScanner() };

/** `bytes` scanned by the scanner under test. */
export function scanJson(bytes: Uint8Array, maxDepth: number): Tape | undefined {
  return scannerUnderTest.scanner.scan(bytes, maxDepth);
}

/** The columns of a tape, each compared by `expectSameTape`. */
const columns = ["kind", "start", "end", "next", "size", "compact", "flags"] as const;

/** Both refused, or the same tokens, counts and number excess. */
export function expectSameTape(actual: Tape | undefined, expected: Tape | undefined): void {
  if (expected === undefined || actual === undefined) {
    expect(actual === undefined, "one scan refused what the other took").toBe(expected === undefined);
    return;
  }
  // `expect` only when they differ: the property suites compare thousands of tapes.
  if (!Object.is(actual.count, expected.count)) expect(actual.count).toBe(expected.count);
  if (!Object.is(actual.numberExcess, expected.numberExcess)) expect(actual.numberExcess).toBe(expected.numberExcess);
  for (const column of columns) {
    const same = actual[column].subarray(0, actual.count).every((value, index) => value === expected[column][index]);
    if (!same) expect.fail(`column ${column} differs`);
  }
}
