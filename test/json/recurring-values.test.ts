import { describe, expect, it } from "vitest";
import { maxNestingDepth } from "../../src/http/read-body.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { recurringValue } from "../../src/json/recurring-values.js";
import type { Tape } from "../../src/json/tape.js";
import { memberToken } from "../../src/json/tape-values.js";

const encoder = new TextEncoder();

/** The recurring value of member `schema` of `{ ...before, schema: value }`, read by `scanner`. */
function readerOf(scanner: JsonScanner) {
  return (value: unknown, before: Record<string, unknown> = {}) => {
    const tape = scanner.scan(encoder.encode(JSON.stringify({ ...before, schema: value })), maxNestingDepth) as Tape;
    return recurringValue(tape, memberToken(tape, 0, "schema"));
  };
}

describe("recurring values", () => {
  it("parses a recurring schema once: the same bytes give the same object, other bytes their own", () => {
    const read = readerOf(new JsonScanner());
    const schema = { type: "object", properties: { a: { type: "string", description: "x".repeat(200) } } };
    const first = read(schema);
    expect(first).toStrictEqual(schema);
    expect(read(schema)).toBe(first);
    const other = read({ ...schema, title: "t" });
    expect(other).not.toBe(first);
    expect(other).toStrictEqual({ ...schema, title: "t" });
    // A small value is not kept: parsed each time.
    expect(read({ type: "string" })).not.toBe(read({ type: "string" }));
    // The same bytes at any offset in a body (compared four at a time only where both are aligned).
    for (let pad = 0; pad < 8; pad += 1) expect(read(schema, { p: "_".repeat(pad) })).toBe(first);
    // Values that differ in one byte near their end are kept apart.
    const last = read({ ...schema, title: "ab" });
    expect(read({ ...schema, title: "ac" })).toStrictEqual({ ...schema, title: "ac" });
    expect(read({ ...schema, title: "ab" })).toStrictEqual(last);
  });

  it("never gives a recurring value for other bytes with the same hash", () => {
    const read = readerOf(new JsonScanner());
    // These two texts have the same hash (found by a birthday search over the title): each keeps its own value.
    const colliding = (title: string) => ({ type: "string", description: "x".repeat(200), title });
    for (let round = 0; round < 3; round += 1) {
      expect(read(colliding("003fws"))).toStrictEqual(colliding("003fws"));
      expect(read(colliding("004d2o"))).toStrictEqual(colliding("004d2o"));
    }
  });

  it("hands out a kept value deep-frozen, so that no caller changes it for the next call", () => {
    const read = readerOf(new JsonScanner());
    const schema = { type: "object", properties: { a: { type: "array", items: [{ description: "x".repeat(200) }] } } };
    const kept = read(schema) as typeof schema;
    expect(Object.isFrozen(kept)).toBe(true);
    expect(Object.isFrozen(kept.properties.a.items)).toBe(true);
    expect(Object.isFrozen(kept.properties.a.items[0])).toBe(true);
    expect(() => {
      (kept as Record<string, unknown>).title = "t";
    }).toThrow(TypeError);
    expect(read(schema)).toStrictEqual(schema);
    // A value not kept is each call's own, not frozen.
    expect(Object.isFrozen(read({ type: "string" }))).toBe(false);
  });

  it("keeps each scanner's values apart: no state outside the instance", () => {
    const schema = { type: "object", description: "x".repeat(200) };
    const one = readerOf(new JsonScanner());
    const two = readerOf(new JsonScanner());
    expect(one(schema)).toBe(one(schema));
    expect(two(schema)).not.toBe(one(schema));
    expect(two(schema)).toStrictEqual(one(schema));
  });

  it("keeps 4 MiB of values at most, dropping the least recently used first", () => {
    const read = readerOf(new JsonScanner());
    const large = (index: number) => ({ index, text: "y".repeat(60 * 1024) });
    const first = read(large(0));
    // 70 values of 60 KiB: past 4 MiB, so the first (untouched since) is dropped and parsed again.
    for (let index = 1; index < 70; index += 1) read(large(index));
    const recent = read(large(69));
    expect(read(large(69))).toBe(recent);
    const again = read(large(0));
    expect(again).not.toBe(first);
    expect(again).toStrictEqual(large(0));
  });
});
