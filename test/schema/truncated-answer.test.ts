import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { completePrefix, truncatedAnswerValidation } from "../../src/schema/truncated-answer.js";
import { validatorOf } from "../support/schema-validators.js";

const secret = "SECRET-VALUE-123";

describe("completePrefix", () => {
  it.each([
    ["a cut inside a string value", '{"a":1,"b":"hal', { a: 1 }],
    ["a cut inside a key", '{"a":1,"bc', { a: 1 }],
    ["a cut after a key", '{"a":1,"b"', { a: 1 }],
    ["a cut after a colon", '{"a":1,"b":', { a: 1 }],
    ["a cut after a comma in an object", '{"a":1,', { a: 1 }],
    ["a cut after a comma in an array", "[1,2,", [1, 2]],
    ["a cut inside \\u00", '["x","\\u00', ["x"]],
    ["a cut just after a backslash", '["x","a\\', ["x"]],
    ["a finished \\u escape and escaped quotes", '["\\u00e9\\"\\\\","b', ['é"\\']],
    ["a cut inside a number", "[1,23", [1]],
    ["a cut inside a fraction", "[1,-0.5", [1]],
    ["a cut inside an exponent", "[1,2e+", [1]],
    ["a number ended by whitespace", "[1,-0.5e+3 ", [1, -500]],
    ["a number ended by a comma", "[7,", [7]],
    ["a cut after true", '{"a":true', { a: true }],
    ["a cut inside false", '{"a":fals', {}],
    ["a cut inside null", "[nul", []],
    ["a spelled-out null", "[null", [null]],
    ["deep nesting", '{"a":{"b":[{"c":[1,[2,{"d":"x', { a: { b: [{ c: [1, [2, {}]] }] } }],
    ["an empty nested container being opened", '{"a":{"b":[', { a: { b: [] } }],
    ["an array of objects", '[{"id":"F1","text":"t"},{"id":"F2","te', [{ id: "F1", text: "t" }, { id: "F2" }]],
    ["a top-level array", '["a","b', ["a"]],
    ["just an opener", "[", []],
    ["whitespace everywhere", ' \n{ "a" :\t[ 1 , 2 ] ,\r\n "b" : { } , "c" ', { a: [1, 2], b: {} }],
    ["astral and accented text", '{"k":"😀é","l":"😀', { k: "😀é" }],
    ["a cut between the halves of a surrogate pair", '["😀", "x\ud83d', ["😀"]],
    ["an escaped surrogate pair", '["\\ud83d\\ude00","\\ud83d', ["😀"]],
    ["complete JSON", '{"a":[1,{"b":null}],"c":"d"}', { a: [1, { b: null }], c: "d" }],
    ["complete JSON with trailing whitespace", '[1,"x"]\n ', [1, "x"]],
    ["a complete top-level string", '"ab"', "ab"],
    ["a complete top-level literal", "false", false],
    ["a top-level number ended by whitespace", "12 ", 12],
  ])("completes %s", (_name, text, expected) => {
    expect(completePrefix(text)).toEqual(expected);
  });

  it.each([
    ["garbage", "hello"],
    ["a prefix invalid before the cut", '{"a":]'],
    ["an empty string", ""],
    ["whitespace only", " \n\t "],
    ["a markdown fence before the JSON", '```json\n{"a":1'],
    ["text after a complete value", '{"a":1} and more'],
    ["a second top-level value", "[1] [2"],
    ["an incomplete top-level string", '"abc'],
    ["an incomplete top-level literal", "tru"],
    ["a top-level number that may be cut", "12"],
    ["a leading zero", "[01"],
    ["a point without digits", "[1.,"],
    ["an unknown escape", '["\\x'],
    ["a bad hex digit", '["\\u00g'],
    ["a raw control character in a string", '["a\nb'],
    ["a trailing comma before a closer", "[1,]"],
    ["a missing colon", '{"a" 1'],
    ["a non-string key", "{1:"],
    ["a mismatched closer", '{"a":[1}'],
    ["a misspelled literal", "[trux"],
  ])("gives undefined for %s", (_name, text) => {
    expect(completePrefix(text)).toBeUndefined();
  });

  it("does not overflow the stack on 100,000 levels of arrays or 50,000 of objects", () => {
    const arrays = completePrefix("[".repeat(100_000));
    expect(Array.isArray(arrays)).toBe(true);
    expect(depthOf(arrays)).toBe(100_000);
    const objects = completePrefix('{"a":'.repeat(50_000));
    expect(depthOf(objects)).toBe(50_000);
  });
});

/** How many arrays and objects nest along the first member of each level; walked without recursion. */
function depthOf(value: unknown): number {
  let depth = 0;
  for (let node = value; typeof node === "object" && node !== null; depth++) {
    node = Array.isArray(node) ? node[0] : Object.values(node)[0];
  }
  return depth;
}

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/**
 * Whether `part` is what a minimal completion of a prefix of `whole`'s text may keep: scalars exactly equal;
 * arrays a prefix of the items, all deep-equal but the last, which is a sub-value (partial only if it is a
 * container); objects a subset of the keys, each value a sub-value.
 */
function isSubValue(part: unknown, whole: unknown): boolean {
  if (!isContainer(part) || !isContainer(whole)) return Object.is(part, whole);
  if (Array.isArray(part) !== Array.isArray(whole)) return false;
  if (Array.isArray(part) && Array.isArray(whole)) {
    if (part.length > whole.length) return false;
    const last = part.length - 1;
    return part.every((item, index) => (index < last ? deepEqual(item, whole[index]) : isSubValue(item, whole[index])));
  }
  const wholeObject = whole as Record<string, unknown>;
  return Object.entries(part).every(
    ([key, value]) => Object.hasOwn(wholeObject, key) && isSubValue(value, wholeObject[key]),
  );
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (!isContainer(a) || !isContainer(b)) return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bRecord = b as Record<string, unknown>;
  const aRecord = a as Record<string, unknown>;
  return (
    aKeys.length === Object.keys(b).length &&
    aKeys.every((key) => Object.hasOwn(bRecord, key) && deepEqual(aRecord[key], bRecord[key]))
  );
}

/** String units: ASCII (quotes and backslashes included), control characters, accents, astral characters, lone surrogates. */
const stringUnit = fc.oneof(
  fc.constantFrom('"', "\\", "/", "\n", "\t", "\u0000", "\u001f", "é", "😀", "𝄞", "\ud800", "\udfff", " "),
  fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 1 }),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
);

const jsonText = fc.string({ unit: stringUnit, maxLength: 8 });

const jsonNumber = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0.5, 1e21, 5e-324, -1.5e-7),
);

const { value: jsonValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    jsonNumber,
    jsonText,
    fc.constantFrom(true, false, null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(jsonText, tie("value"), { maxKeys: 5 }),
  ),
}));

/** Whitespace that JSON allows between tokens. */
const jsonWhitespace = fc.string({ unit: fc.constantFrom(" ", "\t", "\n", "\r"), maxLength: 3 });

/** A JSON text: compact or indented, with whitespace before and after the value. */
const serialized = fc
  .tuple(
    jsonValue,
    fc.constantFrom<string | number | undefined>(undefined, 2, "\t", " \r\n"),
    jsonWhitespace,
    jsonWhitespace,
  )
  .map(([value, indent, before, after]) => `${before}${JSON.stringify(value, null, indent)}${after}`);

describe("completePrefix on every prefix of generated JSON", () => {
  it("keeps only sub-values of the original, grows with the prefix, and gives the original at full length", () => {
    fc.assert(
      fc.property(serialized, (text) => {
        const original: unknown = JSON.parse(text);
        const opener = text.search(/[[{]/);
        const startsWithContainer = opener !== -1 && text.slice(0, opener).trim() === "";
        let previous: unknown;
        for (let k = 0; k <= text.length; k++) {
          const completed = completePrefix(text.slice(0, k));
          if (completed !== undefined) {
            expect(isSubValue(completed, original)).toBe(true);
            if (previous !== undefined) expect(isSubValue(previous, completed)).toBe(true);
          }
          // Once the top-level array or object has opened, every prefix completes.
          if (startsWithContainer && k > opener) expect(completed).not.toBeUndefined();
          previous = completed;
        }
        const full = completePrefix(text);
        // A top-level number with nothing after it may have been cut; with whitespace after, it is complete.
        if (typeof original === "number" && text.trimEnd() === text) expect(full).toBeUndefined();
        else expect(deepEqual(full, original)).toBe(true);
      }),
      { numRuns: 300, seed: 20_240_611 },
    );
  });
});

/** A findings-like schema with required fields at two levels. */
const schema = {
  type: "object",
  additionalProperties: false,
  required: ["title", "findings"],
  properties: {
    title: { type: "string" },
    findings: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["id", "text"],
        properties: { id: { type: "string" }, text: { type: "string" } },
      },
    },
  },
};

const incompleteNote = (reason: string) => ({
  validation_path: "",
  validation_keyword: "incomplete",
  hint: `The provider stopped the answer before its end (reason: ${reason}), so what came back is checked below against the full schema.`,
});

describe("truncatedAnswerValidation", () => {
  it("reports the incomplete note first, then the missing required fields at their path", () => {
    const answer = `{"title":"${secret}","findings":[{"id":"${secret}","te`;
    const result = truncatedAnswerValidation(validatorOf(schema), answer, "length");
    expect(result.valid).toBe(false);
    expect(result.errors[0]).toEqual(incompleteNote("length"));
    expect(result.errors.slice(1)).toEqual([
      expect.objectContaining({
        validation_path: "/findings/0",
        validation_keyword: "required",
        validation_fields: ["id", "text"],
        hint: expect.stringContaining("text"),
      }),
    ]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("reports a missing top-level field when the cut comes before it", () => {
    const result = truncatedAnswerValidation(validatorOf(schema), `{"title":"${secret}","find`, "MAX_TOKENS");
    expect(result.errors[0]).toEqual(incompleteNote("MAX_TOKENS"));
    expect(result.errors[1]).toMatchObject({
      validation_path: "",
      validation_keyword: "required",
      validation_fields: ["findings", "title"],
    });
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("reports only the note for a complete, valid answer, and the schema's errors for a complete invalid one", () => {
    const valid = truncatedAnswerValidation(validatorOf(schema), `{"title":"${secret}","findings":[]}`, "SAFETY");
    expect(valid).toEqual({ valid: false, errors: [incompleteNote("SAFETY")] });
    const invalid = truncatedAnswerValidation(validatorOf(schema), `{"title":1,"findings":[]}`, "max_tokens");
    expect(invalid.errors).toHaveLength(2);
    expect(invalid.errors[1]).toMatchObject({ validation_path: "/title", validation_keyword: "type" });
  });

  it("writes `unknown` for a reason that is not a short word", () => {
    for (const reason of ["len gth", "", "a".repeat(33), `${secret}`, "stop\n", "length!"]) {
      const result = truncatedAnswerValidation(validatorOf(schema), '{"title":"x"', reason);
      expect(result.errors[0]).toEqual(incompleteNote("unknown"));
    }
  });

  it("gives the json error when what came back is no JSON prefix", () => {
    for (const answer of ["hello", '{"a":]', "", `\`\`\`json\n{"title":"${secret}"`]) {
      const result = truncatedAnswerValidation(validatorOf(schema), answer, "length");
      expect(result.errors).toEqual([
        incompleteNote("length"),
        { validation_path: "", validation_keyword: "json", hint: "The answer is not valid JSON." },
      ]);
    }
  });

  it("gives the nesting error for an answer cut too deep to walk", () => {
    const result = truncatedAnswerValidation(validatorOf(schema), "[".repeat(100_000), "length");
    expect(result.errors).toHaveLength(2);
    expect(result.errors[1]).toMatchObject({ validation_path: "", validation_keyword: "nesting" });
  });

  it("keeps at most 20 errors, the note included", () => {
    const items = Array.from({ length: 40 }, (_, index) => `{"id":"${secret}-${index}"}`).join(",");
    const result = truncatedAnswerValidation(
      validatorOf(schema),
      `{"title":"t","findings":[${items},{"id":"x`,
      "length",
    );
    expect(result.errors).toHaveLength(20);
    expect(result.errors[0]).toEqual(incompleteNote("length"));
    expect(result.errors.slice(1).every((error) => error.validation_keyword === "required")).toBe(true);
    expect(JSON.stringify(result)).not.toContain(secret);
  });
});
