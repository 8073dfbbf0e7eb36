import { describe, expect, it } from "vitest";
import { readPointer, replaceAtPointer } from "../../src/schema/json-pointer.js";

/** The example document of RFC 6901 section 5. */
const rfcDocument = {
  foo: ["bar", "baz"],
  "": 0,
  "a/b": 1,
  "c%d": 2,
  "e^f": 3,
  "g|h": 4,
  "i\\j": 5,
  'k"l': 6,
  " ": 7,
  "m~n": 8,
};

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

describe("readPointer", () => {
  it("reads every pointer of the RFC 6901 example", () => {
    const expectations: [string, unknown][] = [
      ["", rfcDocument],
      ["/foo", ["bar", "baz"]],
      ["/foo/0", "bar"],
      ["/", 0],
      ["/a~1b", 1],
      ["/c%d", 2],
      ["/e^f", 3],
      ["/g|h", 4],
      ["/i\\j", 5],
      ['/k"l', 6],
      ["/ ", 7],
      ["/m~0n", 8],
    ];
    for (const [pointer, value] of expectations) {
      expect(readPointer(rfcDocument, pointer)).toEqual({ found: true, value });
    }
  });

  it("unescapes ~1 before ~0, so ~01 names a member called ~1", () => {
    expect(readPointer({ "~1": "tilde-one", "/": "slash" }, "/~01")).toEqual({ found: true, value: "tilde-one" });
  });

  it("follows nested members and array indices", () => {
    const document = { next: { arguments: { choices: [{ kind: "sql" }] } } };
    expect(readPointer(document, "/next/arguments/choices/0/kind")).toEqual({ found: true, value: "sql" });
  });

  it("reports a member whose value is null as found", () => {
    expect(readPointer({ a: null }, "/a")).toEqual({ found: true, value: null });
  });

  it("does not find a missing member", () => {
    expect(readPointer({ a: 1 }, "/b").found).toBe(false);
    expect(readPointer({ a: { b: 1 } }, "/a/c/d").found).toBe(false);
  });

  it("does not find an index past the end, the '-' token, or an index with a leading zero", () => {
    const document = { list: ["a", "b"] };
    expect(readPointer(document, "/list/2").found).toBe(false);
    expect(readPointer(document, "/list/-").found).toBe(false);
    expect(readPointer(document, "/list/01").found).toBe(false);
    expect(readPointer(document, "/list/-1").found).toBe(false);
  });

  it("treats a numeric token on an object as a member name", () => {
    expect(readPointer({ "0": "zero" }, "/0")).toEqual({ found: true, value: "zero" });
  });

  it("does not step into a string, number or null", () => {
    expect(readPointer({ a: "text" }, "/a/0").found).toBe(false);
    expect(readPointer({ a: 5 }, "/a/b").found).toBe(false);
    expect(readPointer({ a: null }, "/a/b").found).toBe(false);
  });

  it("never reaches inherited members such as constructor, __proto__ or an array's length", () => {
    expect(readPointer({}, "/constructor").found).toBe(false);
    expect(readPointer({}, "/__proto__").found).toBe(false);
    expect(readPointer(["a"], "/length").found).toBe(false);
  });

  it("finds nothing for a malformed pointer", () => {
    expect(readPointer({ a: 1 }, "a").found).toBe(false);
    expect(readPointer({ "~2": 1 }, "/~2").found).toBe(false);
    expect(readPointer({ "~": 1 }, "/~").found).toBe(false);
  });
});

describe("replaceAtPointer", () => {
  it("replaces a nested member and keeps every other member", () => {
    const document = { a: { b: 1, c: 2 }, d: 3 };
    expect(replaceAtPointer(document, "/a/b", 9)).toEqual({ a: { b: 9, c: 2 }, d: 3 });
  });

  it("replaces an array element, leaving the document's array as it was", () => {
    const document = { list: ["a", "b", "c"] };
    const replaced = replaceAtPointer(document, "/list/1", "B") as typeof document;
    expect(replaced.list).toEqual(["a", "B", "c"]);
    expect(document.list).toEqual(["a", "b", "c"]);
  });

  it("never mutates a deep-frozen document", () => {
    const document = deepFreeze({ a: [{ b: 1 }], c: { d: 2 } });
    const before = structuredClone(document);
    expect(replaceAtPointer(document, "/a/0/b", 5)).toEqual({ a: [{ b: 5 }], c: { d: 2 } });
    expect(document).toEqual(before);
  });

  it("unescapes ~1 and ~0 in the tokens it follows", () => {
    const document = { "tool/project.query": { "m~n": 1 } };
    expect(replaceAtPointer(document, "/tool~1project.query/m~0n", 2)).toEqual({ "tool/project.query": { "m~n": 2 } });
  });

  it("returns the value itself for the empty pointer", () => {
    expect(replaceAtPointer({ a: 1 }, "", "whole")).toBe("whole");
  });

  it("keeps a member named __proto__ an own member of the copy", () => {
    const document = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
    const replaced = replaceAtPointer(document, "/__proto__", { x: 2 }) as Record<string, unknown>;
    expect(Object.hasOwn(replaced, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(replaced)).toBe(Object.prototype);
    expect(readPointer(replaced, "/__proto__/x")).toEqual({ found: true, value: 2 });
  });

  it("throws a RangeError when the pointer does not resolve or is malformed", () => {
    expect(() => replaceAtPointer({ a: 1 }, "/b", 2)).toThrow(RangeError);
    expect(() => replaceAtPointer({ a: [] }, "/a/0", 2)).toThrow(RangeError);
    expect(() => replaceAtPointer({ a: 1 }, "a", 2)).toThrow(RangeError);
  });
});
