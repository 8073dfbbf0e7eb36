import { isUtf8 } from "node:buffer";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { scannerUnderTest } from "../support/json-scanner.js";

/*
 * The scanner's suites again, as the Node gateway runs the scanner: with each body's UTF-8 checked natively first
 * (`buffer.isUtf8`), so that text past ASCII is read four bytes at a time and its code points counted from its
 * continuation bytes. The files imported register their tests here, with this file's scanner under test; run on
 * their own, they test the scanner checking each sequence itself.
 */
scannerUnderTest.scanner = new JsonScanner(isUtf8);
await import("./json-tape.test.js");
await import("./json-scanner-slab.test.js");
