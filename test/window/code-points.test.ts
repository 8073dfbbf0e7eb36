import { describe, expect, it } from "vitest";
import { compactJson } from "../../src/json/compact-json.js";
import { codePoints, codePointsOf, compactJsonCodePoints } from "../../src/window/code-points.js";

const highSurrogate = "\uD83D";
const lowSurrogate = "\uDE00";

/** A small deterministic PRNG (mulberry32), so the property loop is reproducible. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random string mixing ASCII, BMP text, astral pairs and lone surrogates of both kinds. */
function randomText(random: () => number): string {
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const pieces: string[] = [];
  const length = between(0, 24);
  for (let index = 0; index < length; index++) {
    const kind = between(0, 5);
    if (kind === 0) pieces.push(String.fromCharCode(between(0x00, 0x7f)));
    else if (kind === 1) pieces.push(String.fromCharCode(between(0x80, 0xd7ff)));
    else if (kind === 2) pieces.push(String.fromCharCode(between(0xe000, 0xffff)));
    else if (kind === 3) pieces.push(String.fromCodePoint(between(0x10000, 0x10ffff)));
    else if (kind === 4) pieces.push(String.fromCharCode(between(0xd800, 0xdbff)));
    else pieces.push(String.fromCharCode(between(0xdc00, 0xdfff)));
  }
  return pieces.join("");
}

describe("codePoints", () => {
  it("counts the empty string as zero", () => {
    expect(codePoints("")).toBe(0);
  });

  it("counts each ASCII character as one", () => {
    expect(codePoints("Hello, world!\n")).toBe(14);
  });

  it("counts BMP letters outside ASCII such as é and ü as one each", () => {
    expect(codePoints("é")).toBe(1);
    expect(codePoints("Grüße, café")).toBe(11);
  });

  it("counts an astral emoji as one although it takes two UTF-16 units", () => {
    expect("😀".length).toBe(2);
    expect(codePoints("😀")).toBe(1);
  });

  it("counts the musical symbol G clef (U+1D11E) as one", () => {
    expect(codePoints("𝄞")).toBe(1);
  });

  it("counts astral characters at the start, middle and end of ASCII text as one each", () => {
    expect(codePoints("😀a𝄞b😀")).toBe(5);
  });

  it("counts adjacent astral characters as one each", () => {
    expect(codePoints("😀😀😀")).toBe(3);
  });

  it("counts a letter with a combining acute accent (e + U+0301) as two", () => {
    expect(codePoints("e\u0301")).toBe(2);
  });

  it("counts a ZWJ family emoji per code point: three people and two joiners are five", () => {
    expect(codePoints("👨\u200D👩\u200D👧")).toBe(5);
  });

  it("counts an emoji with a skin-tone modifier as two", () => {
    expect(codePoints("👍🏽")).toBe(2);
  });

  it("counts a regional-indicator flag as two", () => {
    expect(codePoints("🇩🇪")).toBe(2);
  });

  it("counts a lone high surrogate as one", () => {
    expect(codePoints(highSurrogate)).toBe(1);
  });

  it("counts a lone low surrogate as one", () => {
    expect(codePoints(lowSurrogate)).toBe(1);
  });

  it("counts a high surrogate at the very end of the text as one", () => {
    expect(codePoints(`abc${highSurrogate}`)).toBe(4);
  });

  it("counts a low surrogate at the very start of the text as one", () => {
    expect(codePoints(`${lowSurrogate}abc`)).toBe(4);
  });

  it("counts a high surrogate followed by ASCII as two", () => {
    expect(codePoints(`${highSurrogate}x`)).toBe(2);
  });

  it("counts a reversed pair (low then high) as two", () => {
    expect(codePoints(`${lowSurrogate}${highSurrogate}`)).toBe(2);
  });

  it("counts two high surrogates followed by one low surrogate as a lone surrogate plus a pair", () => {
    expect(codePoints(`${highSurrogate}${highSurrogate}${lowSurrogate}`)).toBe(2);
  });

  it("counts a pair followed by a lone low surrogate as two", () => {
    expect(codePoints(`${highSurrogate}${lowSurrogate}${lowSurrogate}`)).toBe(2);
  });

  it("counts a valid pair that ends the text as one", () => {
    expect(codePoints("ab😀")).toBe(3);
  });

  it("counts long astral text in code points, not UTF-16 units", () => {
    const text = "😀".repeat(10000);
    expect(text.length).toBe(20000);
    expect(codePoints(text)).toBe(10000);
  });

  it("agrees with the string iterator ([...s].length) over 5,000 random strings with surrogates", () => {
    const random = seededRandom(0x5eed);
    for (let round = 0; round < 5000; round++) {
      const text = randomText(random);
      expect(codePoints(text), JSON.stringify(text)).toBe([...text].length);
    }
  });
});

describe("codePointsOf", () => {
  it("counts no texts as zero", () => {
    expect(codePointsOf([])).toBe(0);
  });

  it("sums the code points of every text", () => {
    expect(codePointsOf(["ab", "😀", "", "é"])).toBe(4);
  });

  it("does not join a high surrogate ending one text with a low surrogate starting the next", () => {
    expect(codePointsOf([highSurrogate, lowSurrogate])).toBe(2);
  });
});

describe("compactJson", () => {
  it("writes JSON without any whitespace", () => {
    expect(compactJson({ type: "object", properties: { a: { type: "string" } } })).toBe(
      '{"type":"object","properties":{"a":{"type":"string"}}}',
    );
  });

  it("keeps the key order of the value", () => {
    expect(compactJson({ b: 1, a: 2 })).toBe('{"b":1,"a":2}');
  });

  it("turns undefined into the empty string", () => {
    expect(compactJson(undefined)).toBe("");
  });
});

describe("compactJsonCodePoints", () => {
  it("counts undefined as zero", () => {
    expect(compactJsonCodePoints(undefined)).toBe(0);
  });

  it("counts null as the four characters of null", () => {
    expect(compactJsonCodePoints(null)).toBe(4);
  });

  it("counts an object as its compact JSON text", () => {
    expect(compactJsonCodePoints({ a: 1, b: [true, null] })).toBe('{"a":1,"b":[true,null]}'.length);
  });

  it("counts non-ASCII inside a schema as one code point each, unescaped", () => {
    const schema = { description: "Grüße 😀" };
    expect(compactJson(schema)).toBe('{"description":"Grüße 😀"}');
    expect(compactJsonCodePoints(schema)).toBe(25);
  });

  it("counts a newline inside a string as its two-character JSON escape, as it is sent", () => {
    expect(compactJsonCodePoints({ a: "x\ny" })).toBe('{"a":"x\\ny"}'.length);
  });

  it("counts a lone surrogate inside a value as its six-character JSON escape", () => {
    expect(compactJson({ a: highSurrogate })).toBe('{"a":"\\ud83d"}');
    expect(compactJsonCodePoints({ a: highSurrogate })).toBe(14);
  });
});
