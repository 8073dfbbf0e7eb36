import fc from "fast-check";
import { isObject, type Json, type JsonObject, type Path } from "./oracle.js";

/** A small deterministic PRNG (mulberry32), so a large S is built from a seed and shrinks by its length. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Code points of S, one per entry: ASCII, what JSON escapes, BMP beyond Latin-1, astral (also the
 * parts of a ZWJ sequence and a flag), and lone surrogates.
 */
const pools: string[][] = [
  [..."abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,;:-_!?()[]{}<>/'`~@#$%^&*+=|"],
  ['"', "\\", "\n", "\t", "\r", "\b", "\f", "\u0000", "\u0001", "\u001f", "/"],
  [..."éßøñüÆЖжΩλ中文日本語한국어עבריתالعربية", "\u2028", "\u2029", "\ufeff", "\u00a0", "\u200b", "\uffff"],
  [..."😀𝄞🧪𐍈\u{10ffff}\u{1f468}\u200d\u{1f469}🇩🇪"],
  ["\ud800", "\udbff", "\udc00", "\udfff"],
];

export interface BigString {
  /** The string S itself. */
  text: string;
  /** Its length in code points (exactly `codePoints(text)`). */
  length: number;
}

function isLoneSurrogate(piece: string): boolean {
  const unit = piece.charCodeAt(0);
  return piece.length === 1 && unit >= 0xd800 && unit <= 0xdfff;
}

const masterLength = 200_000;

/** A long random sequence of code points (one per entry), lone surrogates never adjacent. */
function masterSequence(seed: number, surrogates: boolean): string[] {
  const random = prng(seed);
  const usable = surrogates ? pools : pools.slice(0, 4);
  const sequence: string[] = [];
  let previousLone = false;
  while (sequence.length < masterLength) {
    const pool = usable[Math.floor(random() * random() * usable.length)]!;
    let piece = pool[Math.floor(random() * pool.length)]!;
    const lone = isLoneSurrogate(piece);
    if (lone && previousLone) piece = "x";
    previousLone = lone && piece !== "x";
    sequence.push(piece);
  }
  return sequence;
}

/** A master sequence joined once, with where each of its entries starts in the text (and where the last ends). */
function joinedMaster(sequence: string[]): { text: string; starts: Uint32Array } {
  const starts = new Uint32Array(sequence.length + 1);
  for (let index = 0; index < sequence.length; index++) starts[index + 1] = starts[index]! + sequence[index]!.length;
  return { text: sequence.join(""), starts };
}

const masters = [joinedMaster(masterSequence(1, false)), joinedMaster(masterSequence(2, true))];

/**
 * S with exactly `length` code points: "«S»" and a slice of a master sequence chosen by the seed;
 * `surrogates` allows lone surrogates. (Slicing keeps it fast and makes it shrink by its length.)
 */
export function buildBigString(length: number, seed: number, surrogates: boolean): string {
  const master = masters[surrogates ? 1 : 0]!;
  const body = length - 3;
  const offset = Math.abs(seed) % (masterLength - body);
  // A slice must not start with a low surrogate that the marker's last character could pair with: it cannot ("»").
  // Entries `offset` to `offset + body` of the sequence, cut from its joined text (joining them each time cost a
  // tenth of an oracle file's time).
  return `«S»${master.text.slice(master.starts[offset], master.starts[offset + body])}`;
}

/**
 * S: 3,000 to 30,000 code points. Most are short (the measuring properties need no more, and the
 * suite stays fast); a quarter lie over the 20,000 limit of investigation.bounded.
 */
export function bigStringArb(): fc.Arbitrary<BigString> {
  return fc
    .record({
      length: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 3_000, max: 4_500 }) },
        { weight: 1, arbitrary: fc.integer({ min: 20_001, max: 30_000 }) },
      ),
      seed: fc.integer(),
      surrogates: fc.boolean(),
    })
    .map(({ length, seed, surrogates }) => ({ text: buildBigString(length, seed, surrogates), length }));
}

/** Small text: a few characters, including ones JSON escapes and astral ones. */
export const smallText: fc.Arbitrary<string> = fc.string({
  unit: fc.constantFrom("a", "b", "z", "Q", " ", "é", "中", "😀", '"', "\\", "\n", "0"),
  maxLength: 6,
});

/** A short identifier-like name. */
export const smallName: fc.Arbitrary<string> = fc
  .string({ unit: fc.constantFrom("a", "b", "c", "x", "y", "_", "1"), minLength: 1, maxLength: 6 })
  .map((name) => `f${name}`);

export function base64Of(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

/** A few bytes of "binary" media, base64. */
export const binaryBase64: fc.Arbitrary<string> = fc
  .uint8Array({ minLength: 1, maxLength: 12 })
  .map((bytes) => Buffer.from(bytes).toString("base64"));

export const binaryMediaType = fc.constantFrom("image/png", "image/jpeg", "application/pdf", "audio/wav", "video/mp4");
export const imageMediaType = fc.constantFrom("image/png", "image/jpeg", "image/webp", "image/gif");
/** Text-like media types; undefined means no type. */
export const textMediaType = fc.constantFrom<string | undefined>(
  "text/plain",
  "text/markdown",
  "text/csv",
  "text/html",
  "application/json",
  "application/xml",
  undefined,
);

/** A small JSON Schema (object with a few string/number properties). */
export const jsonSchemaArb: fc.Arbitrary<JsonObject> = fc
  .record(
    {
      names: fc.uniqueArray(smallName, { minLength: 1, maxLength: 3 }),
      description: fc.option(smallText, { nil: undefined }),
      kinds: fc.array(fc.constantFrom("string", "number", "integer", "boolean"), { minLength: 3, maxLength: 3 }),
      withEnum: fc.boolean(),
      enumValue: smallText,
    },
    { requiredKeys: ["names", "kinds", "withEnum", "enumValue"] },
  )
  .map(({ names, description, kinds, withEnum, enumValue }) => {
    const properties: JsonObject = {};
    names.forEach((name, index) => {
      const kind = kinds[index % kinds.length]!;
      properties[name] = withEnum && kind === "string" ? { type: "string", enum: [enumValue, "b"] } : { type: kind };
    });
    const schema: JsonObject = { type: "object", properties, required: names, additionalProperties: false };
    if (description !== undefined) schema.description = description;
    return schema;
  });

/** `fc.oneof` constraints that let a counterexample shrink towards the first alternative. */
export const cross = { withCrossShrink: true } as const;

/** An optional member: present (with its arbitrary value), null when `nullable`, or absent (what it shrinks to). */
export function optional<T>(arb: fc.Arbitrary<T>, nullable = false): fc.Arbitrary<T | null | undefined> {
  return nullable
    ? fc.oneof(
        cross,
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: arb },
        fc.constant(null),
      )
    : fc.oneof(cross, fc.constant(undefined), arb);
}

/** Drops members whose value is undefined, so `optional` reads like the wire. */
export function compact(object: Record<string, unknown>): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) result[key] = value as Json;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Rendering JSON text ourselves: escape styles, whitespace and duplicate keys.

export interface RenderOptions {
  /** Seed of the escape choices. */
  seed: number;
  /** Probability of escaping a character JSON would not need to escape (\uXXXX, `\/`). */
  escapeRate: number;
  /** Whitespace between tokens. */
  indent: "" | " " | "\n  ";
}

export const renderOptionsArb: fc.Arbitrary<RenderOptions> = fc.record({
  seed: fc.integer(),
  escapeRate: fc.constantFrom(0, 0, 0.05, 0.5),
  indent: fc.constantFrom<RenderOptions["indent"]>("", "", " ", "\n  "),
});

/** A second occurrence of a key in the object at `path`, rendered before or after the others. */
export interface DuplicateKey {
  path: Path;
  key: string;
  value: Json;
  first: boolean;
  /** Write the second occurrence's key with every character escaped (`\u0074ext` for `text`). */
  escaped: boolean;
}

/** `\uXXXX` of each code unit, made when first needed. */
const hexEscapes: string[] = new Array(0x10000);

function hex4(unit: number): string {
  hexEscapes[unit] ??= `\\u${unit.toString(16).padStart(4, "0")}`;
  return hexEscapes[unit];
}

/** A JSON string literal; escapes what JSON requires, lone surrogates, and at random more. */
export function quote(text: string, random: () => number, escapeRate: number): string {
  if (escapeRate === 0 || text.length === 0) return JSON.stringify(text);
  // In chunks: a chunk is written by JSON.stringify, or every code unit of it as \uXXXX. A surrogate
  // pair split between chunks stays valid JSON: its two escapes parse back into the pair.
  const chunk = 48;
  const out: string[] = ['"'];
  for (let start = 0; start < text.length; start += chunk) {
    const piece = text.slice(start, start + chunk);
    if (random() >= escapeRate) out.push(JSON.stringify(piece).slice(1, -1));
    else
      for (let index = 0; index < piece.length; index++)
        out.push(piece.charCodeAt(index) === 0x2f ? "\\/" : hex4(piece.charCodeAt(index)));
  }
  out.push('"');
  return out.join("");
}

function samePath(a: Path, b: Path): boolean {
  return a.length === b.length && a.every((segment, index) => segment === b[index]);
}

/** Renders a JSON value as text, with an optional duplicate key. */
export function render(value: Json, options: RenderOptions, duplicate?: DuplicateKey): string {
  const random = prng(options.seed);
  const space = options.indent;
  // The path of a node is only needed to find the duplicate's object: without one, every node is given the root's.
  const child = duplicate ? (path: Path, segment: string | number): Path => [...path, segment] : (path: Path) => path;
  const go = (node: Json, path: Path): string => {
    if (node === null || typeof node === "boolean" || typeof node === "number") return JSON.stringify(node);
    if (typeof node === "string") return quote(node, random, options.escapeRate);
    if (Array.isArray(node))
      return `[${space}${node.map((item, index) => go(item, child(path, index))).join(`,${space}`)}${space}]`;
    const members = Object.entries(node).map(
      ([key, member]) =>
        `${quote(key, random, options.escapeRate)}${space ? ": " : ":"}${go(member, child(path, key))}`,
    );
    if (duplicate && samePath(duplicate.path, path)) {
      const key = quote(duplicate.key, random, duplicate.escaped ? 1 : options.escapeRate);
      const extra = `${key}:${go(duplicate.value, child(path, duplicate.key))}`;
      if (duplicate.first) members.unshift(extra);
      else members.push(extra);
    }
    return `{${space}${members.join(`,${space}`)}${space}}`;
  };
  return go(value, []);
}

/** Deep-copies JSON. */
export function clone<T extends Json>(value: T): T {
  return structuredClone(value);
}

/** The value at a path. */
export function at(root: Json, path: Path): Json | undefined {
  let node: Json | undefined = root;
  for (const segment of path) {
    if (Array.isArray(node) && typeof segment === "number") node = node[segment];
    else if (isObject(node) && typeof segment === "string") node = node[segment];
    else return undefined;
  }
  return node;
}

/** Sets the value at a path (its parent must exist). */
export function setAt(root: Json, path: Path, value: Json): void {
  const parent = at(root, path.slice(0, -1));
  const key = path[path.length - 1]!;
  if (Array.isArray(parent) && typeof key === "number") parent[key] = value;
  else if (isObject(parent) && typeof key === "string") parent[key] = value;
  else throw new Error(`no parent at ${JSON.stringify(path)}`);
}
