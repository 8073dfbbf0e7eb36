import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { maxNestingDepth, parseJsonBody } from "../../src/http/read-body.js";
import type { JsonObject } from "../../src/json/json-object.js";
import { lazyObject } from "../../src/json/lazy-object.js";
import { type Tape, TapeKind } from "../../src/json/tape.js";
import { TapeText } from "../../src/json/tape-text.js";
import { memberToken, tapeString, tapeValue } from "../../src/json/tape-values.js";
import { type LogicalCall, textString } from "../../src/logical-call.js";
import { anthropicSurface } from "../../src/surfaces/anthropic/anthropic-surface.js";
import { geminiSurface } from "../../src/surfaces/gemini/gemini-surface.js";
import { openaiSurface } from "../../src/surfaces/openai/openai-surface.js";
import type { MeasuredEndpoint, Surface } from "../../src/surfaces/surface.js";
import { codePoints, compactJsonCodePoints } from "../../src/window/code-points.js";
import { anthropicBody } from "../oracle/support/anthropic-spec.js";
import { geminiBody } from "../oracle/support/gemini-spec.js";
import { render, renderOptionsArb } from "../oracle/support/gen.js";
import { openaiChatBody } from "../oracle/support/openai-chat-spec.js";
import { openaiResponsesBody } from "../oracle/support/openai-responses-spec.js";
import { scanJson } from "../support/json-scanner.js";
import { expectToBe, expectToStrictEqual } from "./expect-when-differs.js";

/*
 * The scanner and the rules read over its tape against the parser and the rules read over the parsed
 * body, which stay the reference: on every body the two must agree exactly, on what they accept, on
 * every count, and on the error of what they refuse.
 */

const encoder = new TextEncoder();

/** The parser's verdict: the body and its number excess, or the error it refuses with. */
function parsed(bytes: Uint8Array): { body: JsonObject; numberExcess: number } | { error: string } {
  try {
    return parseJsonBody(bytes);
  } catch (error) {
    if (error instanceof GatewayError) return { error: `${error.code} ${error.message}` };
    throw error;
  }
}

/** Every string token's code points against the decoded string's, as counted on the parsed path. */
function checkStrings(tape: Tape): void {
  for (let index = 0; index < tape.count; index++) {
    if (tape.kind[index] !== TapeKind.String) continue;
    const text = tapeString(tape, index);
    expectToBe(tape.size[index], codePoints(text));
    expectToBe(tape.compact[index], codePoints(JSON.stringify(text)));
    // Told from the bytes (or, with an escape, the decoded text) as the decoded text tells it.
    const differs = ["{", "}", '"', "\\", "u", "\n"].find(
      (ascii) => new TapeText(tape, index).holds(ascii) !== text.includes(ascii),
    );
    if (differs !== undefined) expect.fail(`holds(${JSON.stringify(differs)}) differs on ${JSON.stringify(text)}`);
  }
}

/** The scanner agrees with the parser on `bytes`: it accepts exactly what the parser accepts, and counts the same. */
function agreesWithParser(bytes: Uint8Array): Tape | undefined {
  const tape = scanJson(bytes, maxNestingDepth);
  // The same bytes 1 to 3 bytes into a buffer give the same tape (words are read only where they line up).
  // (The checks of this file's hot loops call `expect` only when they fail: see expect-when-differs.ts.)
  expectToBe(sameTokens(scanJson(shifted(bytes, 1 + (bytes.length % 3)), maxNestingDepth), tape), true);
  const verdict = parsed(bytes);
  if ("error" in verdict) {
    if (tape !== undefined) expect(tape, verdict.error).toBeUndefined();
    return undefined;
  }
  if (tape === undefined) {
    expect(tape, "the scanner refused a body the parser accepts").toBeDefined();
    return undefined;
  }
  expectToStrictEqual(tapeValue(tape, 0), verdict.body);
  expectToBe(tape.compact[0], compactJsonCodePoints(verdict.body));
  expectToBe(tape.numberExcess, verdict.numberExcess);
  checkStrings(tape);
  return tape;
}

/** Whether two scans both refused, or made the same tokens with the same counts. */
function sameTokens(one: Tape | undefined, other: Tape | undefined): boolean {
  if (one === undefined || other === undefined) return one === other;
  if (one.count !== other.count || one.numberExcess !== other.numberExcess) return false;
  return (["kind", "start", "end", "next", "size", "compact", "flags"] as const).every((column) =>
    one[column].subarray(0, one.count).every((value, token) => value === other[column][token]),
  );
}

/** `bytes` at `shift` bytes into a buffer of their own (a body read into a larger buffer starts anywhere in it). */
function shifted(bytes: Uint8Array, shift: number): Uint8Array {
  const buffer = new Uint8Array(bytes.length + shift + 3).fill(0x20);
  buffer.set(bytes, shift);
  return buffer.subarray(shift, shift + bytes.length);
}

/** A logical call with its texts as strings, to compare the two readings. */
function plain(call: LogicalCall): unknown {
  return {
    ...call,
    system: call.system.map(textString),
    messages: call.messages.map(textString),
    schemaTexts: call.schemaTexts.map(textString),
  };
}

function outcome(read: () => LogicalCall): unknown {
  try {
    return plain(read());
  } catch (error) {
    if (error instanceof GatewayError) return { error: error.code, message: error.message, details: error.details };
    throw error;
  }
}

function endpointOf(surface: Surface, path: string): MeasuredEndpoint {
  const endpoint = surface.match("POST", path);
  if (endpoint === undefined || !("parse" in endpoint) || endpoint.readTape === undefined) {
    throw new Error(`No measured endpoint with a tape reading at ${path}.`);
  }
  return endpoint;
}

const surfaces = [
  {
    name: "OpenAI Chat Completions",
    body: openaiChatBody,
    endpoint: endpointOf(openaiSurface, "/chat/completions"),
    path: "/chat/completions",
  },
  {
    name: "OpenAI Responses",
    body: openaiResponsesBody,
    endpoint: endpointOf(openaiSurface, "/responses"),
    path: "/responses",
  },
  {
    name: "Anthropic Messages",
    body: anthropicBody,
    endpoint: endpointOf(anthropicSurface, "/v1/messages"),
    path: "/v1/messages",
  },
  {
    name: "Gemini generateContent",
    body: geminiBody,
    endpoint: endpointOf(geminiSurface, "/v1beta/models/gemini-2.5-flash:generateContent"),
    path: "/v1beta/models/gemini-2.5-flash:generateContent",
  },
];

/** A JSON value anywhere in a body: what a client may put where a surface expects something else. */
const anyJson = fc.jsonValue({ maxDepth: 3, stringUnit: "binary" });

describe("reading a body from its tape agrees with parsing it (differential, 12,500 bodies per surface; 100,000 with the scanner's own below)", () => {
  for (const { name, body, endpoint, path } of surfaces) {
    it(`${name}: the same call, counts and refusals`, () => {
      // A generated body, sometimes with one member replaced by any JSON (a wrong type, null, an object).
      const arbitrary = fc.record({
        body,
        replace: fc.option(fc.tuple(fc.nat(), anyJson), { freq: 3 }),
        options: renderOptionsArb,
      });
      fc.assert(
        fc.property(arbitrary, ({ body: generated, replace, options }) => {
          const value = structuredClone(generated) as JsonObject;
          if (replace !== null) {
            const keys = Object.keys(value);
            const key = keys[replace[0] % Math.max(1, keys.length)];
            if (key !== undefined) value[key] = replace[1];
          }
          const bytes = encoder.encode(render(value as never, options));
          const tape = agreesWithParser(bytes);
          if (tape === undefined) return;
          const fromBody = outcome(() => endpoint.parse(JSON.parse(new TextDecoder().decode(bytes)), path));
          const fromTape = outcome(() => (endpoint.readTape as NonNullable<typeof endpoint.readTape>)(tape, path));
          expectToStrictEqual(fromTape, fromBody);
        }),
        { numRuns: 12_500 },
      );
    }, 240_000);
  }
});

/** A body as bytes with one byte changed, inserted or removed: mostly not JSON, or JSON of another value. */
const mutated = fc
  .record({
    value: fc.dictionary(fc.string({ unit: "binary" }), anyJson, { maxKeys: 6 }),
    options: renderOptionsArb,
    edits: fc.array(fc.tuple(fc.constantFrom("set", "insert", "delete"), fc.nat(), fc.integer({ min: 0, max: 255 })), {
      maxLength: 2,
    }),
  })
  .map(({ value, options, edits }) => {
    const bytes = [...encoder.encode(render(value as never, options))];
    for (const [edit, position, byte] of edits) {
      const at = position % (bytes.length + 1);
      if (edit === "set") bytes[at] = byte;
      else if (edit === "insert") bytes.splice(at, 0, byte);
      else bytes.splice(at, 1);
    }
    return Uint8Array.from(bytes);
  });

describe("the scanner accepts exactly what the parser accepts, and counts the same", () => {
  it("on any object, and on its bytes changed at random (50,000 bodies)", () => {
    fc.assert(
      fc.property(mutated, (bytes) => {
        agreesWithParser(bytes);
      }),
      { numRuns: 50_000 },
    );
  }, 240_000);

  it("on the special cases: escapes, surrogates, numbers, a byte order mark, whitespace, UTF-8 edges", () => {
    const texts = [
      '{"a":"\\ud83d\\ude00 \\ud83d \\ude00 \\udc00\\ud800 \\u0000\\u001f\\u007f\\u2028 \\/ \\b\\f\\n\\r\\t"}',
      '{"n":[0,-0,1.0,1e0,1E+2,-1.5e-3,123456789012345,1234567890123456,12345678901234567890,1e400,0.1]}',
      '\ufeff{"a":1}',
      '{"\ufeff":{},"\ufeffmodel":"\ufeffx"}',
      ' \t\r\n{ "a" : [ ] , "b" : { } } \n',
      '{"a":"é😀中"}',
      '{"a":1,"\\u0061":2}',
      '{"":1,"":2}',
      '{"a":"\\u00"}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":-}',
      '{"a":tru}',
      '{"a":1} {}',
      "[]",
      '"x"',
      "",
      "{",
    ];
    for (const text of texts) agreesWithParser(encoder.encode(text));
    // UTF-8 a fatal decoder refuses: overlong, a surrogate, past U+10FFFF, cut short, a lone continuation.
    for (const bad of [
      [0xc0, 0xaf],
      [0xe0, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xe2, 0x82],
      [0x80],
    ]) {
      agreesWithParser(Uint8Array.from([...encoder.encode('{"a":"'), ...bad, ...encoder.encode('"}')]));
    }
  });

  it("stops a run of plain text at any byte that ends it, wherever it falls in a 4-byte word", () => {
    // Escapes, characters past ASCII, and (not JSON) a raw quote too early, a raw control character, a bad escape.
    const enders = ['\\"', "\\\\", "\\n", "\\u0001", "é", "中", "😀", '"', "\n", "\u0001", "\\x"];
    for (let offset = 0; offset < 12; offset++) {
      for (const ender of enders) {
        // The body at every offset in its buffer too: read four bytes at a time only where they line up.
        const body = encoder.encode(`{"a":"${"x".repeat(offset)}${ender}${"y".repeat(offset + 9)}"}`);
        for (let shift = 0; shift < 4; shift++) agreesWithParser(shifted(body, shift));
      }
      // A string cut off within its last four bytes: the run ends at the body's end, never past it.
      agreesWithParser(shifted(encoder.encode(`{"a":"${"x".repeat(offset)}`), offset % 4));
    }
  });

  it("counts long runs of text past ASCII, however they mix with ASCII, escapes and the end of a word", () => {
    // Thousands of words in one run: a checked body's continuation bytes are counted in lanes summed every 255 words.
    const pieces = ["中文测试", "😀", "é", "—", "a", "ab", "abc", "\\n", "\\u00e9", "\\ud83d\\ude00", " "];
    let seed = 7;
    for (const length of [1, 255, 256, 1_021, 1_024, 4_096, 20_000]) {
      for (const only of [0, 1, 2, 3, -1]) {
        let text = "";
        while (text.length < length) {
          seed = (seed * 1_103_515_245 + 12_345) >>> 0;
          text += pieces[only >= 0 ? only : seed % pieces.length];
        }
        const body = encoder.encode(`{"a":"${text}","b":["${text}x","é${text}"]}`);
        for (let shift = 0; shift < 4; shift++) agreesWithParser(shifted(body, shift));
      }
    }
  });

  it("refuses nesting past the limit, as the parser does, and takes it up to the limit", () => {
    for (const depth of [maxNestingDepth - 1, maxNestingDepth, maxNestingDepth + 1, 100_000]) {
      const text = `${'{"a":['.repeat(depth / 2)}${depth % 2 === 1 ? "{}" : "1"}${"]}".repeat(depth / 2)}`;
      agreesWithParser(encoder.encode(`{"x":${text}}`));
    }
  });

  it("leaves a body of more values than a tape holds to the parser", () => {
    const dense = encoder.encode(`{"a":[${"1,".repeat(1_100_000)}1]}`);
    expect(scanJson(dense, maxNestingDepth)).toBeUndefined();
    expect(parseJsonBody(dense).body.a).toHaveLength(1_100_001);
    expect(scanJson(encoder.encode(`{"a":[${"1,".repeat(500_000)}1]}`), maxNestingDepth)?.count).toBe(500_004);
  });

  it("hands out a lazily parsed object equal to the parsed body, member by member", () => {
    const body = { model: "m", messages: [{ role: "user", content: "hi" }], "0": 1, n: null, __proto__: 2 };
    const text = JSON.stringify(body).replace('"n":null', '"n":null,"__proto__":3');
    const tape = scanJson(encoder.encode(text), maxNestingDepth) as Tape;
    const lazy = lazyObject(tape);
    const reference = JSON.parse(text);
    expect(Object.keys(lazy)).toStrictEqual(Object.keys(reference));
    expect(lazy.messages).toStrictEqual(reference.messages);
    expect(JSON.stringify(lazy)).toBe(JSON.stringify(reference));
    expect({ ...lazy }).toStrictEqual({ ...reference });
  });

  it("reads each lazy object from its own tape, though members of one name share their accessors", () => {
    const long = "k".repeat(100);
    const tapeOf = (value: unknown) => scanJson(encoder.encode(JSON.stringify(value)), maxNestingDepth) as Tape;
    const bodies = Array.from({ length: 5 }, (_, index) => ({ model: `m${index}`, n: [index], [long]: index }));
    const lazies = bodies.map((body) => lazyObject(tapeOf(body)));
    // Read in another order than made, one of them written before it was read.
    (lazies[3] as Record<string, unknown>).model = "set";
    for (const index of [4, 0, 3, 2, 1]) {
      const lazy = lazies[index] as Record<string, unknown>;
      const expected = { ...bodies[index], ...(index === 3 ? { model: "set" } : {}) };
      expect(lazy.model).toBe(expected.model);
      expect(lazy).toStrictEqual(expected);
      expect(JSON.stringify(lazy)).toBe(JSON.stringify(expected));
    }
    // A member of an object nested in the tape, made lazy on its own.
    const nested = tapeOf({ outer: { model: "inner" }, model: "top" });
    expect(lazyObject(nested, memberToken(nested, 0, "outer"))).toStrictEqual({ model: "inner" });
  });
});
