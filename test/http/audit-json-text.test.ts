import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { auditJsonText, type DuplicateKey, findDuplicateKey } from "../../src/http/audit-json-text.js";
import { parseJsonBody } from "../../src/http/read-body.js";
import { memberPath } from "../../src/json/member-path.js";

const encoder = new TextEncoder();

function duplicateIn(text: string): DuplicateKey | undefined {
  return findDuplicateKey(text, JSON.parse(text));
}

/** The error parseJsonBody throws for a body. */
function refusal(text: string): GatewayError {
  try {
    parseJsonBody(encoder.encode(text));
  } catch (error) {
    if (GatewayError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the body was accepted");
}

describe("duplicate keys in a request body", () => {
  it("refuses a repeated top-level key, whose last occurrence alone JSON.parse would keep", () => {
    const big = JSON.stringify({ role: "user", content: "BIG-PROMPT-TEXT ".repeat(1_000) });
    const error = refusal(`{"messages":[${big}],"messages":[{"role":"user","content":"hi"}]}`);
    expect(error).toMatchObject({ code: "INVALID_REQUEST", status: 400, details: { param: "messages" } });
    expect(error.message).toBe('The request body has a duplicate key "messages" in its top-level object.');
    expect(error.message).not.toContain("BIG-PROMPT-TEXT");
  });

  it("refuses a repeated key at any depth and names the object that holds it", () => {
    const error = refusal('{"model":"m","messages":[{"role":"user"},{"role":"user","content":"a","content":"b"}]}');
    expect(error.message).toBe("The request body has a duplicate key \"content\" in the object at 'messages[1]'.");
    expect(error.details.param).toBe("messages[1].content");
    expect(duplicateIn('[[0,{"x":{"a b":{"k":1,"k":2}}}]]')).toEqual({ key: "k", objectPath: '[0][1].x["a b"]' });
  });

  it("accepts the same key in different objects, and keys that differ", () => {
    expect(duplicateIn('{"a":{"a":1},"b":{"a":2},"c":[{"a":3},{"a":4}]}')).toBeUndefined();
    expect(duplicateIn('{"1":1,"01":2,"A":3,"a":4,"a ":5}')).toBeUndefined();
    expect(parseJsonBody(encoder.encode('{"a":1,"b":{"a":2}}')).body).toEqual({ a: 1, b: { a: 2 } });
  });

  it("takes keys spelled with different escapes as the same key", () => {
    expect(duplicateIn('{"a":1,"\\u0061":2}')).toEqual({ key: "a", objectPath: "" });
    expect(duplicateIn('{"a/b":1,"a\\/b":2}')).toEqual({ key: "a/b", objectPath: "" });
    expect(duplicateIn('{"😀":1,"\\ud83d\\ude00":2}')).toEqual({ key: "😀", objectPath: "" });
  });

  it("counts __proto__, which JSON.parse makes an own key, like any other key", () => {
    expect(duplicateIn('{"__proto__":1,"__proto__":2}')).toEqual({ key: "__proto__", objectPath: "" });
    expect(duplicateIn('{"__proto__":{"a":1,"a":2}}')).toEqual({ key: "a", objectPath: "__proto__" });
    expect(duplicateIn('{"__proto__":{"a":1},"a":2,"constructor":3}')).toBeUndefined();
  });

  it("is not misled by quotes, colons and backslashes inside strings", () => {
    expect(duplicateIn('{"a":"\\"a\\":","b":"\\\\","c":"x\\\\\\"y\\":"}')).toBeUndefined();
    expect(duplicateIn('{"a\\\\":1,"a\\\\":2}')).toEqual({ key: "a\\", objectPath: "" });
    expect(duplicateIn('{"a":"\\\\","a":1}')).toEqual({ key: "a", objectPath: "" });
    expect(duplicateIn('["a", "a", {"a" : "a"}]')).toBeUndefined();
  });

  it("finds a key repeated across JSON whitespace before the colon", () => {
    expect(duplicateIn('{ "a" \n\t: 1 ,\r\n "a"  :2}')).toEqual({ key: "a", objectPath: "" });
  });

  it("ends on text that is not JSON instead of looping", () => {
    expect(findDuplicateKey('{"a":1,"a":2,"b', {})).toEqual({ key: "a", objectPath: "" });
    expect(findDuplicateKey('{"a":1,"b":2,"c', {})).toBeUndefined();
    expect(findDuplicateKey('{"a":1,"b', {})).toBeUndefined();
    expect(findDuplicateKey('"', {})).toBeUndefined();
  });

  it("still finds a duplicate when Object.prototype carries an enumerable property", () => {
    const prototype = Object.prototype as Record<string, unknown>;
    prototype.polluted = 1;
    try {
      expect(duplicateIn('{"a":1,"a":2}')).toEqual({ key: "a", objectPath: "" });
    } finally {
      delete prototype.polluted;
    }
  });

  it("cuts a long key to 64 characters and a long object path to its last 200", () => {
    const key = "k".repeat(1_000);
    const error = refusal(`{${JSON.stringify(key)}:1,${JSON.stringify(key)}:2}`);
    expect(error.message).toContain(`"${"k".repeat(64)}…"`);
    expect(error.message).not.toContain("k".repeat(65));
    const deep = `${'{"level":'.repeat(300)}{"a":1,"a":2}${"}".repeat(300)}`;
    const deepError = refusal(deep);
    expect(deepError.message.length).toBeLessThan(300);
    expect(deepError.message).toMatch(/in the object at '…[a-z.]+\.level\.level'\.$/);
    expect(deepError.details.param?.length).toBeLessThanOrEqual(201);
  });

  it("does not split a surrogate pair when it cuts a key", () => {
    const key = `${"k".repeat(63)}😀😀`;
    const error = refusal(`{${JSON.stringify(key)}:1,${JSON.stringify(key)}:2}`);
    expect(error.message).toContain(`"${"k".repeat(63)}…"`);
  });
});

/** A reference that tells duplicates by parsing the text itself: keys of each object into a Set. */
function oracle(text: string): DuplicateKey | undefined {
  let position = 0;
  const space = () => {
    while (" \t\n\r".includes(text[position] ?? "x")) position++;
  };
  const string = (): string => {
    position++;
    let value = "";
    for (;;) {
      const character = text[position++];
      if (character === '"') return value;
      if (character !== "\\") {
        value += character;
        continue;
      }
      const escaped = text[position++] as string;
      if (escaped === "u") {
        value += String.fromCharCode(Number.parseInt(text.slice(position, position + 4), 16));
        position += 4;
      } else value += ({ b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" } as Record<string, string>)[escaped] ?? escaped;
    }
  };
  const value = (labels: Array<string | number>): DuplicateKey | undefined => {
    space();
    const first = text[position];
    if (first === "{") {
      position++;
      const keys = new Set<string>();
      space();
      while (text[position] !== "}") {
        space();
        const key = string();
        if (keys.has(key)) return { key, objectPath: format(labels) };
        keys.add(key);
        space();
        position++; // the colon
        const found = value([...labels, key]);
        if (found) return found;
        space();
        if (text[position] === ",") position++;
      }
      position++;
    } else if (first === "[") {
      position++;
      space();
      for (let index = 0; text[position] !== "]"; index++) {
        const found = value([...labels, index]);
        if (found) return found;
        space();
        if (text[position] === ",") position++;
      }
      position++;
    } else if (first === '"') string();
    else while (position < text.length && !",]} \t\n\r".includes(text[position] as string)) position++;
    return undefined;
  };
  return value([]);
}

function format(labels: Array<string | number>): string {
  let path = "";
  for (const label of labels) path = typeof label === "number" ? `${path}[${label}]` : memberPath(path, label);
  return path;
}

/** Every UTF-16 unit as a `\uXXXX` escape. */
function escapeAll(text: string): string {
  return [...text]
    .flatMap((character) => [...character].map((_, index) => character.charCodeAt(index)))
    .map((unit) => `\\u${unit.toString(16).padStart(4, "0")}`)
    .join("");
}

const whitespace = fc.constantFrom("", "", " ", "\n", "\t", "\r\n  ");
/** Few distinct keys, so that objects often repeat one; some awkward to spell. */
const keyName = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom("a", "b", "__proto__", "constructor", "", "é", 'q"', "\\", "😀", "1", "a/b"),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);
/** A key as the text spells it: plainly, or with escapes that JSON.parse reads to the same key. */
const spelledKey = fc.tuple(keyName, fc.constantFrom("plain", "unicode", "slash")).map(([key, spelling]) => {
  if (spelling === "unicode") return `"${escapeAll(key)}"`;
  if (spelling === "slash") return JSON.stringify(key).replace(/\//g, "\\/");
  return JSON.stringify(key);
});
/** Scalars, with strings made to look like keys and escapes. */
const scalar = fc.oneof(
  fc.constantFrom("null", "true", "-1.5e3", "0", '"\\"a\\":"', '"\\\\"', '"\\\\\\""', '"a\\\\\\\\"'),
  fc.string({ maxLength: 6 }).map((text) => JSON.stringify(text)),
);
const { value: jsonText, object: jsonObject } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: "small" }, scalar, tie("array"), tie("object")),
  array: fc
    .tuple(fc.array(fc.tuple(whitespace, tie("value"), whitespace), { maxLength: 4 }), whitespace)
    .map(([items, inner]) => `[${inner}${items.map(([before, item, after]) => before + item + after).join(",")}]`),
  object: fc
    .tuple(fc.array(fc.tuple(whitespace, spelledKey, whitespace, tie("value")), { maxLength: 5 }), whitespace)
    .map(
      ([members, inner]) =>
        `{${inner}${members.map(([before, key, colon, item]) => `${before}${key}${colon}:${colon}${item}`).join(",")}}`,
    ),
}));

describe("the duplicate-key check against a reference parser", () => {
  it("finds exactly the duplicates that a Set per object finds, first one first, at the same path", () => {
    let duplicates = 0;
    let clean = 0;
    fc.assert(
      fc.property(jsonText, (text) => {
        const expected = oracle(text);
        expect(duplicateIn(text)).toEqual(expected);
        if (expected) duplicates++;
        else clean++;
      }),
      { numRuns: 5_000 },
    );
    // Both outcomes are exercised often.
    expect(duplicates).toBeGreaterThan(500);
    expect(clean).toBeGreaterThan(500);
  });

  it("finds a member copied into any object of a valid body", () => {
    const object = jsonObject.filter((text) => oracle(text) === undefined);
    fc.assert(
      fc.property(object, fc.nat(), (text, pick) => {
        // Copy one member of the top-level object to its end.
        const parsed = JSON.parse(text) as Record<string, unknown>;
        const keys = Object.keys(parsed);
        if (keys.length === 0) return;
        const key = keys[pick % keys.length] as string;
        const copied = `${text.slice(0, text.lastIndexOf("}"))},${JSON.stringify(key)}:0}`;
        expect(duplicateIn(copied)).toEqual({ key, objectPath: "" });
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("number literals written longer than their values", () => {
  const excessOf = (text: string) => auditJsonText(text, JSON.parse(text)).numberExcess;

  it("counts nothing for literals as JavaScript writes them", () => {
    expect(excessOf('{"a":[0,-3,100,0.2,-1.5,1e-7,1e+21,123456789012345]}')).toBe(0);
  });

  it("counts the digits a literal carries beyond its value: trailing zeros, needless exponents", () => {
    // 1.0 → 1 (2), -0.50 → -0.5 (1), 1e0 → 1 (2), 5E+00 → 5 (4)
    expect(excessOf('{"a":1.0,"b":[-0.50,1e0,5E+00]}')).toBe(2 + 1 + 2 + 4);
  });

  it("counts a literal too large for a double by its own length, less the null it parses to", () => {
    const huge = `1${"0".repeat(25_000)}`;
    expect(excessOf(`{"n":${huge}}`)).toBe(huge.length - "null".length);
  });

  it("counts a long integer beyond 2^53 as it is written, digit for digit", () => {
    expect(excessOf('{"n":12345678901234567890}')).toBe(0);
    expect(excessOf(`{"n":1${"0".repeat(40)}}`)).toBe(41 - JSON.stringify(1e40).length);
  });

  it("does not read digits inside strings, escaped quotes included", () => {
    expect(excessOf('{"a":"1.000000","b":"\\"1.0000\\"","c":2.0}')).toBe(2);
  });
});
