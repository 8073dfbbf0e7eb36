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
