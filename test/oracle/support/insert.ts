import fc from "fast-check";
import {
  at,
  type BigString,
  base64Of,
  bigStringArb,
  clone,
  type DuplicateKey,
  type RenderOptions,
  render,
  renderOptionsArb,
  setAt,
} from "./gen.js";
import type { SurfaceName } from "./harness.js";
import { isObject, type Json, type JsonObject, type Path, type SurfaceRules } from "./oracle.js";

/** What a surface gives the property: its bodies, its oracle rules, and where S may go. */
export interface SurfaceSpec {
  name: SurfaceName;
  rules: SurfaceRules;
  /** Realistic valid bodies, small. */
  body: fc.Arbitrary<JsonObject>;
  /** Arrays of parts, items or blocks, where a part of an unknown type may be appended. */
  isPartArray(path: Path): boolean;
  /** A part, item or block of a type the surface does not know, carrying `s`. */
  unknownPart(s: string, variant: number): Json;
  /** Objects that are, or hold, a media member (a `null` one included). */
  isMediaObject(path: Path, object: JsonObject): boolean;
  /** Adds a text-like inline media part whose decoded text is `s`; returns where. */
  addTextMedia(body: JsonObject, s: string, variant: number): Path;
  /** Where the gateway may legitimately rewrite the body (Gemini's schema projection). */
  rewritten?(path: Path): boolean;
}

export const categories = [
  "text",
  "unknown-value",
  "unknown-key",
  "unknown-part",
  "media-sibling",
  "text-media",
  "duplicate",
  "number",
] as const;
export type Category = (typeof categories)[number];

/** Keys whose string values are closed vocabularies: never a place for S. */
const vocabularyKeys = new Set([
  "role",
  "type",
  "detail",
  "format",
  "status",
  "phase",
  "language",
  "outcome",
  "mimeType",
  "mime_type",
  "media_type",
  "tool_choice",
]);

/**
 * Names of fields the surface does not know where they are put: plain unknown names, names of the
 * Object prototype, and names that are on a closed list elsewhere (at the top level, or in another
 * object). A name the oracle's rules leave out at the chosen place is replaced by `oracle_extra`.
 */
export const unknownNames = [
  "oracle_extra",
  "oracleNote",
  "x-oracle",
  "notes_for_model",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "model",
  "temperature",
  "metadata",
  "stream",
  "user",
  "labels",
  "effort",
  "strict",
  "verbosity",
];

/** Names a long number literal takes: schema keywords, argument names and unknown names. */
export const numberNames = ["maximum", "minimum", "default", "const", "n", "count", "oracle_number"];

interface Sites {
  text: Path[];
  objects: Path[];
  partArrays: Path[];
  media: Path[];
}

/** Every place of a body where S may go: counted strings, counted objects, part arrays, media objects. */
export function collectSites(body: JsonObject, spec: SurfaceSpec): Sites {
  const sites: Sites = { text: [], objects: [], partArrays: [], media: [] };
  const visit = (node: Json, path: Path, key: string | undefined): void => {
    if (typeof node === "string") {
      if (key === undefined || !vocabularyKeys.has(key)) sites.text.push(path);
    } else if (Array.isArray(node)) {
      if (spec.isPartArray(path)) sites.partArrays.push(path);
      node.forEach((item, index) => {
        visit(item, [...path, index], key);
      });
    } else if (isObject(node)) {
      sites.objects.push(path);
      if (spec.isMediaObject(path, node)) sites.media.push(path);
      for (const [member, value] of Object.entries(node)) {
        if (spec.rules.decide(path, member, value, node) === "count") visit(value, [...path, member], member);
      }
    }
  };
  visit(body, [], undefined);
  return sites;
}

/** One generated case: a body, where S goes, S itself, and how the JSON text is written. */
export interface Case {
  body: JsonObject;
  category: Category;
  index: number;
  variant: number;
  unknownName: string;
  s: BigString;
  render: RenderOptions;
  /** Also send the case to investigation.bounded. */
  bounded: boolean;
}

/** A long number literal standing for S: its text and its length in code points. */
export interface BigNumber {
  text: string;
  length: number;
}

/** Number literals of 3,000 to 30,000 characters: integers, fractions, exponents, negative ones. */
export function bigNumberArb(overLimit: boolean): fc.Arbitrary<BigNumber> {
  return fc
    .record({
      length: overLimit
        ? fc.integer({ min: 20_001, max: 30_000 })
        : fc.oneof(
            { weight: 3, arbitrary: fc.integer({ min: 3_000, max: 4_500 }) },
            { weight: 1, arbitrary: fc.integer({ min: 20_001, max: 30_000 }) },
          ),
      form: fc.constantFrom("integer", "nines", "fraction", "exponent", "negative"),
    })
    .map(({ length, form }) => {
      const digits = (count: number, digit: string) => digit.repeat(Math.max(0, count));
      const forms: Record<string, string> = {
        integer: `1${digits(length - 1, "0")}`,
        nines: digits(length, "9"),
        fraction: `0.${digits(length - 3, "0")}1`,
        exponent: `1.${digits(length - 5, "0")}e-5`,
        negative: `-1${digits(length - 1, "0")}`,
      };
      return { text: forms[form]!, length };
    });
}

/** Cases of S as a string (mode `string`) or as a long number literal (mode `number`). */
export function caseArb(
  spec: SurfaceSpec,
  boundedShare: number,
  mode: "string" | "number" = "string",
  overLimit = false,
): fc.Arbitrary<Case> {
  if (mode === "number")
    return fc
      .record({
        body: spec.body,
        index: fc.nat(1000),
        variant: fc.nat(1000),
        unknownName: fc.constantFrom(...numberNames),
        number: bigNumberArb(overLimit),
        draw: fc.noBias(fc.integer({ min: 0, max: 999 })),
      })
      .map(({ number, draw, ...rest }) => ({
        ...rest,
        category: "number" as const,
        s: number,
        render: { seed: 0, escapeRate: 0, indent: "" as const },
        bounded: overLimit,
      }));
  return fc
    .record({
      body: spec.body,
      category: fc.oneof(
        { weight: 5, arbitrary: fc.constant<Category>("text") },
        { weight: 3, arbitrary: fc.constant<Category>("unknown-value") },
        { weight: 2, arbitrary: fc.constant<Category>("unknown-key") },
        { weight: 2, arbitrary: fc.constant<Category>("unknown-part") },
        { weight: 3, arbitrary: fc.constant<Category>("media-sibling") },
        { weight: 2, arbitrary: fc.constant<Category>("text-media") },
        { weight: 1, arbitrary: fc.constant<Category>("duplicate") },
      ),
      index: fc.nat(1000),
      variant: fc.nat(1000),
      unknownName: fc.constantFrom(...unknownNames),
      s: bigStringArb(),
      render: renderOptionsArb,
      draw: fc.noBias(fc.integer({ min: 0, max: 999 })),
    })
    .map(({ draw, ...rest }) => ({
      ...rest,
      // Most cases over the bounded limit go to investigation.bounded too, a few under it.
      bounded: draw < (rest.s.length > 20_000 ? boundedShare : boundedShare / 4) * 1000,
    }));
}

/** A value carrying s: itself, in an array, in an object, or as a key. */
function carrying(s: string, variant: number): Json {
  switch (variant % 5) {
    case 0:
      return s;
    case 1:
      return [s];
    case 2:
      return { inner: s };
    case 3:
      return [{ deep: [1, s] }];
    default:
      return { [s]: true };
  }
}

/** A small value beside a key s. */
function besideKey(variant: number): Json {
  const values: Json[] = [null, 1, "v", {}, [true], { a: null }];
  return values[variant % values.length]!;
}

/** Sets an own member, also one named `__proto__`. */
function define(object: JsonObject, key: string, value: Json): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function addMember(object: JsonObject, key: string, value: Json, first: boolean): void {
  if (!first) {
    define(object, key, value);
    return;
  }
  const entries = Object.entries(object);
  for (const name of Object.keys(object)) delete object[name];
  define(object, key, value);
  for (const [name, member] of entries) if (name !== key) define(object, name, member);
}

/** The case made concrete: the JSON text to send and what the properties need to know. */
export interface Built {
  category: Category;
  /** Where S went. */
  path: Path;
  text: string;
  /** The same body with S replaced by a short marker, for reports. */
  shown(): string;
  duplicate: boolean;
  /** S is encoded (base64) in the body, so not findable as a string. */
  encoded: boolean;
  /** S went where the gateway may rewrite the body. */
  rewritten: boolean;
}

/** Inserts S into the body as the case says; a category without a site falls back to an unknown root field. */
export function build(spec: SurfaceSpec, testCase: Case): Built {
  const make = (s: string) => insert(spec, testCase, s);
  const real = make(testCase.s.text);
  return { ...real, shown: () => make(`⟪S: ${testCase.s.length} code points⟫`).text };
}

function insert(spec: SurfaceSpec, testCase: Case, s: string): Omit<Built, "shown"> {
  const body = clone(testCase.body);
  const sites = collectSites(body, spec);
  const { index, variant, unknownName } = testCase;
  const pick = (paths: Path[]): Path | undefined => (paths.length ? paths[index % paths.length] : undefined);
  const finish = (
    category: Category,
    path: Path,
    extra: Partial<Built> = {},
    duplicate?: DuplicateKey,
  ): Omit<Built, "shown"> => ({
    category,
    path,
    text: render(body, testCase.render, duplicate),
    duplicate: duplicate !== undefined,
    encoded: false,
    rewritten: spec.rewritten?.(path) ?? false,
    ...extra,
  });
  const addUnknown = (category: Category, objectPath: Path, asKey: boolean): Omit<Built, "shown"> => {
    const object = at(body, objectPath) as JsonObject;
    const first = variant % 2 === 0;
    if (asKey) {
      addMember(object, s, besideKey(variant), first);
      return finish(category, [...objectPath, "<key>"]);
    }
    const value = carrying(s, variant >> 1);
    // Never a name the README leaves out at this place, nor one the object already has.
    const name =
      Object.hasOwn(object, unknownName) || spec.rules.decide(objectPath, unknownName, value, object) !== "count"
        ? "oracle_extra"
        : unknownName;
    addMember(object, name, value, first);
    return finish(category, [...objectPath, name]);
  };
  switch (testCase.category) {
    case "text": {
      const path = pick(sites.text);
      if (!path) break;
      const before = at(body, path) as string;
      const forms = [s, `${before}${s}`, `${s}${before}`];
      setAt(body, path, forms[variant % forms.length]!);
      return finish("text", path);
    }
    case "unknown-value":
    case "unknown-key": {
      const path = pick(sites.objects);
      if (!path) break;
      return addUnknown(testCase.category, path, testCase.category === "unknown-key");
    }
    case "unknown-part": {
      const path = pick(sites.partArrays);
      if (!path) break;
      const list = at(body, path) as Json[];
      const position = variant % (list.length + 1);
      list.splice(position, 0, spec.unknownPart(s, variant >> 2));
      return finish("unknown-part", [...path, position]);
    }
    case "media-sibling": {
      const path = pick(sites.media);
      if (!path) break;
      return addUnknown("media-sibling", path, variant % 3 === 0);
    }
    case "text-media": {
      const path = spec.addTextMedia(body, s, variant);
      return finish("text-media", path, { encoded: true });
    }
    case "number": {
      // The number literal is written in place of a placeholder after rendering.
      const path = pick(sites.objects) ?? [];
      const object = at(body, path) as JsonObject;
      const name =
        Object.hasOwn(object, unknownName) || spec.rules.decide(path, unknownName, 0, object) !== "count"
          ? "oracle_number"
          : unknownName;
      addMember(object, name, variant % 4 === 0 ? [numberPlaceholder] : numberPlaceholder, variant % 2 === 0);
      const built = finish("number", [...path, name]);
      return { ...built, text: built.text.replace(JSON.stringify(numberPlaceholder), s) };
    }
    case "duplicate": {
      const path = pick(sites.objects) ?? [];
      const object = at(body, path) as JsonObject;
      const keys = Object.keys(object);
      const first = variant % 2 === 0;
      if (keys.length > 0 && variant % 3 !== 0) {
        const key = keys[(variant >> 2) % keys.length]!;
        return finish("duplicate", [...path, key], {}, { path, key, value: s, first, escaped: variant % 8 >= 4 });
      }
      // The key S twice.
      define(object, s, "one");
      return finish("duplicate", [...path, "<key>"], {}, { path, key: s, value: "two", first, escaped: false });
    }
  }
  return addUnknown(testCase.category, [], testCase.category === "unknown-key");
}

const numberPlaceholder = "__ORACLE_NUMBER__";

/** Whether S stands in a parsed body: as (part of) a string or a key. */
export function containsString(node: Json, s: string): boolean {
  if (typeof node === "string") return node.includes(s);
  if (Array.isArray(node)) return node.some((item) => containsString(item, s));
  if (isObject(node)) return Object.entries(node).some(([key, value]) => key.includes(s) || containsString(value, s));
  return false;
}

export { base64Of };
