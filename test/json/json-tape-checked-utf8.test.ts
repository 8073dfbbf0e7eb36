import { isUtf8 } from "node:buffer";
import { useUtf8Check } from "../../src/json/json-tape.js";

/*
 * The scanner's suites again, as the Node gateway runs the scanner: with each body's UTF-8 checked natively first
 * (`buffer.isUtf8`), so that text past ASCII is read four bytes at a time and its code points counted from its
 * continuation bytes. The files imported register their tests here, with the check installed in this file's modules;
 * run on their own (and in workerd), they test the scanner checking each sequence itself.
 */
useUtf8Check(isUtf8);
await import("./json-tape.test.js");
await import("./json-tape-segments.test.js");
