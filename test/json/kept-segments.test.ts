import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { maxNestingDepth } from "../../src/http/read-body.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { recurringValue } from "../../src/json/recurring-values.js";
import type { Tape } from "../../src/json/tape.js";
import { memberToken } from "../../src/json/tape-values.js";
import { expectSameTape } from "../support/json-scanner.js";

/*
 * A top-level member's value whose bytes the scanner met twice before is copied from then instead of scanned
 * (see `KeptSegments` in kept-segments.ts). The reference is a scan by a scanner of its own, which has kept nothing:
 * every tape must be the same, token by token, wherever the value stands in a body and whatever the body around it.
 * A tape tells which of its values were copied (`copied`).
 */

const encoder = new TextEncoder();
/** The scanner under test: a new one for each test. */
let scanner = new JsonScanner();

/** `bytes` scanned by the scanner under test. */
function scanJson(bytes: Uint8Array, maxDepth: number): Tape | undefined {
  return scanner.scan(bytes, maxDepth);
}

/** How many values the scan of `bytes` by the scanner under test copied from kept ones (-1: refused). */
function copiesIn(bytes: Uint8Array, maxDepth = maxNestingDepth): number {
  return scanJson(bytes, maxDepth)?.copied.length ?? -1;
}

/** The tape of `bytes` by a scanner that remembers nothing. */
function freshScan(bytes: Uint8Array, maxDepth = maxNestingDepth): Tape | undefined {
  return new JsonScanner().scan(bytes, maxDepth);
}

/** A value dense in tokens, as a response schema or tool declarations are: what the scanner keeps. */
const denseValue = fc.oneof(
  fc.array(fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }), { minLength: 30, maxLength: 90 }),
  fc.dictionary(fc.string({ unit: "binary", maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), {
    minKeys: 30,
    maxKeys: 90,
  }),
);
/** Literals the scanner rewrites as its own counting sees them: number excess, escapes, a byte order mark's like. */
const oddText = fc.constantFrom(
  '{"n":[1.0,1e0,-0,0.10,1E+2,12345678901234567890],"s":"\\u00e9\\/\\ud83d\\ude00"}',
  "[]",
);

/** The text of a body holding `value` under key `key`, after a padding member that moves it by `pad` bytes. */
function bodyText(value: string, pad: number, key = "v", tail = ""): string {
  return `{"p":"${"_".repeat(pad)}","${key}":${value}${tail}}`;
}

/** The dense value as JSON text, with the odd literals spliced in where it is an array or object. */
function valueText(value: unknown, odd: string): string {
  const text = JSON.stringify(value);
  if (text.startsWith("[")) return `[${odd},${text.slice(1)}`;
  return text.length > 2 ? `{"odd":${odd},${text.slice(1)}` : text;
}

describe("a top-level value scanned before gives the same tape as a fresh scan", () => {
  beforeEach(() => {
    scanner = new JsonScanner();
  });

  it("once kept, at any offset, under any key, in any body around it (2,000 values)", () => {
    fc.assert(
      fc.property(
        denseValue,
        oddText,
        fc.nat({ max: 11 }),
        fc.nat({ max: 11 }),
        fc.constantFrom("", ',"z":{}', ',"w":[1,2,"x"]'),
        (value, odd, pad, otherPad, tail) => {
          const text = valueText(value, odd);
          const first = encoder.encode(bodyText(text, pad));
          const moved = encoder.encode(bodyText(text, otherPad, "other", tail));
          const expectedFirst = freshScan(first);
          const expectedMoved = freshScan(moved);
          // Seen twice, then kept: the third scan and the moved body copy it.
          for (let round = 0; round < 2; round++) expectSameTape(scanJson(first, maxNestingDepth), expectedFirst);
          const third = scanJson(first, maxNestingDepth);
          const other = scanJson(moved, maxNestingDepth);
          expectSameTape(third, expectedFirst);
          expectSameTape(other, expectedMoved);
          // Kept where it is dense enough (a value of a few long strings is scanned anyway).
          const copies = (third?.copied.length ?? 0) + (other?.copied.length ?? 0);
          if (kept(first)) expect(copies).toBe(expectedMoved === undefined ? 1 : 2);
        },
      ),
      { numRuns: 2_000 },
    );
  }, 120_000);

  it("copies a kept value in fact (a scan of its bytes with one byte changed is not taken for it)", () => {
    const value = JSON.stringify(Array.from({ length: 40 }, (_, index) => ({ id: index, name: `n${index}` })));
    const body = encoder.encode(bodyText(value, 3));
    for (let round = 0; round < 2; round++) scanJson(body, maxNestingDepth);
    // One byte changed at a time, across the value: some texts still JSON, some not; each as a fresh scan reads it.
    const start = new TextDecoder().decode(body).indexOf("[");
    for (let at = start; at < start + value.length; at += 7) {
      for (const replacement of [0x22, 0x7d, 0x31, 0x5b]) {
        const changed = body.slice();
        changed[at] = replacement;
        const expected = freshScan(changed);
        for (let round = 0; round < 2; round++) scanJson(body, maxNestingDepth);
        expectSameTape(scanJson(changed, maxNestingDepth), expected);
      }
    }
  });

  it("refuses a kept value where it nests deeper than the limit allows, as a fresh scan does", () => {
    const nested = (levels: number) => `${"[".repeat(levels - 1)}[${"1,".repeat(150)}1]${"]".repeat(levels - 1)}`;
    for (const levels of [1, 2, 9, 10, 11, 40]) {
      const body = encoder.encode(bodyText(nested(levels), 5));
      // The value stands at the second level: it reaches level 1 + `levels`, and is copied wherever that is allowed.
      for (const maxDepth of [levels - 1, levels, levels + 1, levels + 2, 41, 42]) {
        const expected = freshScan(body, maxDepth);
        for (let round = 0; round < 2; round++) scanJson(body, maxNestingDepth);
        const tape = scanJson(body, maxDepth);
        expectSameTape(tape, expected);
        expect(tape?.copied.length ?? 0, `levels ${levels}, limit ${maxDepth}`).toBe(1 + levels <= maxDepth ? 1 : 0);
      }
    }
  });

  it("gives a copied value's recurring parts as the same objects, equal to their parsed values", () => {
    const schema = { type: "object", properties: Object.fromEntries(range(40)), description: "d".repeat(100) };
    const format = JSON.stringify({ type: "json_schema", json_schema: { name: "n", schema } });
    const schemaOf = (tape: Tape) => {
      const formatToken = memberToken(tape, 0, "v");
      return recurringValue(tape, memberToken(tape, memberToken(tape, formatToken, "json_schema"), "schema"));
    };
    const first = schemaOf(scanJson(encoder.encode(bodyText(format, 0)), maxNestingDepth) as Tape);
    expect(first).toStrictEqual(schema);
    for (let pad = 0; pad < 6; pad++) {
      const tape = scanJson(encoder.encode(bodyText(format, pad, "v", ',"z":1')), maxNestingDepth) as Tape;
      expect(schemaOf(tape)).toBe(first);
      // From the second body on, the value is kept; from the third, copied.
      expect(tape.copied.length).toBe(pad >= 1 ? 1 : 0);
    }
    // A recurring value of a copied value that is not the first asked for.
    const tape = scanJson(encoder.encode(bodyText(format, 9)), maxNestingDepth) as Tape;
    const properties = memberToken(
      tape,
      memberToken(tape, memberToken(tape, memberToken(tape, 0, "v"), "json_schema"), "schema"),
      "properties",
    );
    expect(recurringValue(tape, properties)).toStrictEqual(schema.properties);
    expect(recurringValue(tape, properties)).toBe(recurringValue(tape, properties));
  });

  it("keeps no more than 4 MiB of bytes, however many values come twice, at any alignment", () => {
    const limit = 4 * 1024 * 1024;
    for (let index = 0; index < 60; index++) {
      // 60 to 175 KB each (most of the 256 KiB a kept value may have), dense, each its own.
      const items = 20_000 + ((index * 7_919) % 40_000);
      const value = JSON.stringify(Array.from({ length: items }, (_, item) => (item === 0 ? index : item % 100)));
      for (let pad = 0; pad < 6; pad++) {
        expect(scanJson(encoder.encode(bodyText(value, pad)), maxNestingDepth)).toBeDefined();
        expect(scanner.keptBytes()).toBeLessThanOrEqual(limit);
      }
    }
    expect(scanner.keptBytes()).toBeGreaterThan(limit / 2);
  });

  it("keeps values apart that share their first bytes, and finds each again", () => {
    const schema = (title: string) =>
      JSON.stringify({
        type: "json_schema",
        json_schema: { name: "same-prefix", schema: { properties: Object.fromEntries(range(40)), title } },
      });
    const bodies = Array.from({ length: 8 }, (_, index) =>
      encoder.encode(bodyText(schema(`t${"x".repeat(index)}`), index % 4)),
    );
    const expected = bodies.map((body) => freshScan(body));
    const scanAll = () => {
      for (const [index, body] of bodies.entries()) expectSameTape(scanJson(body, maxNestingDepth), expected[index]);
    };
    // 8 values share their first 128 bytes, as many as are kept per such prefix: seen twice, each is found again.
    // (Their lengths differ: values alike in prefix, length, tokens and compact size take turns being kept.)
    scanAll();
    scanAll();
    let copies = 0;
    for (const body of bodies) copies += copiesIn(body);
    expect(copies).toBe(8);
  });
});

/** Whether the value of `v` in `body` is one the scanner keeps: at least 256 bytes, 64 tokens, one per 32 bytes. */
function kept(body: Uint8Array): boolean {
  const tape = freshScan(body);
  if (tape === undefined) return false;
  const value = 4; // {"p":…,"v":… : the object, key p, its value, key v, then v's value.
  const tokens = (tape.next[value] as number) - value;
  const bytes = (tape.end[value] as number) - (tape.start[value] as number);
  return bytes >= 256 && tokens >= 64 && bytes <= tokens * 32;
}

function range(count: number): [string, unknown][] {
  return Array.from({ length: count }, (_, index) => [`p${index}`, { type: "string" }]);
}
