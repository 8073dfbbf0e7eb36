import { sha256Hex } from "../json/sha256-hex.js";
import { codePoints } from "./code-points.js";

/** One page of a large result, as a controller hands it to a model. */
export interface JsonFragment {
  type: "json_fragment";
  /** Zero-based. */
  page: number;
  pages: number;
  /** Where the page starts in the serialized result, in code points. */
  offset: number;
  /** The serialized result's length, in code points. */
  total_chars: number;
  /** SHA-256 (hex) of the whole serialized result's UTF-8 bytes: the same on every page. */
  sha256: string;
  /** The page: at most `pageChars` code points of the compact JSON, which may end inside a JSON token. */
  text: string;
}

/** A page's size when none is given: 1,600 characters. */
export const defaultPageChars = 1600;

/**
 * The fewest code points a page may be asked to hold: a page carries some 200 characters of place and hash besides
 * its text, and a page size of 1 turned a megabyte into a million objects.
 */
export const minPageChars = 200;

/** The most code points a page may be asked to hold: a page is meant to fit a bounded window. */
export const maxPageChars = 1_000_000;

/**
 * The most one answer of pages holds (`POST /promptgate/window/fragment`): its pages, and the code points of the
 * serialization they cut. A larger result is kept as evidence and recalled a page at a time.
 */
export const fragmentAnswerLimits = { maxPages: 1_000, maxChars: 4_000_000 } as const;

/** Whether `pageChars` is a page size a caller may ask for: a whole number from 200 to 1,000,000. */
export function isPageSize(pageChars: unknown): pageChars is number {
  return Number.isInteger(pageChars) && (pageChars as number) >= minPageChars && (pageChars as number) <= maxPageChars;
}

/**
 * Serializes `value` once as compact JSON and cuts it into pages of at most `pageChars` code points (the gateway's
 * unit), each a `json_fragment` with its place and the SHA-256 of the whole. The pages' texts concatenated are the
 * serialization exactly; a surrogate pair is never split. A value without a JSON form (undefined, a function) is
 * refused with a TypeError, as is a page size that is not a whole number from 200 to 1,000,000.
 */
export async function fragment(value: unknown, options: { pageChars?: number } = {}): Promise<JsonFragment[]> {
  const pageChars = options.pageChars ?? defaultPageChars;
  if (!isPageSize(pageChars)) {
    throw new TypeError(`pageChars must be a whole number from ${minPageChars} to ${maxPageChars}.`);
  }
  const serialized = JSON.stringify(value) as string | undefined;
  if (serialized === undefined) throw new TypeError("The value has no JSON form.");
  return pagesOf(serialized, pageChars);
}

/** How a serialized result pages: its length in code points and its number of pages (at least one). */
export function pagingOf(serialized: string, pageChars: number): { total: number; pages: number } {
  const total = codePoints(serialized);
  return { total, pages: Math.max(1, Math.ceil(total / pageChars)) };
}

/** The pages of a serialized result (see `fragment`), for a result serialized once and kept. */
export async function pagesOf(serialized: string, pageChars: number): Promise<JsonFragment[]> {
  const { total, pages } = pagingOf(serialized, pageChars);
  const sha256 = await sha256Hex(serialized);
  const advance = codePointWalk(serialized);
  const fragments: JsonFragment[] = [];
  let index = 0;
  for (let page = 0; page < pages; page++) {
    const end = advance(index, pageChars);
    const text = serialized.slice(index, end);
    fragments.push({ type: "json_fragment", page, pages, offset: page * pageChars, total_chars: total, sha256, text });
    index = end;
  }
  return fragments;
}

/**
 * Page `page` of a serialized result alone, as `pagesOf` would cut it, without cutting the others; undefined past
 * the last page. What a recall answers: a result of ten megabytes in pages of 200 is one page's work, not 50,000.
 */
export async function pageOf(serialized: string, pageChars: number, page: number): Promise<JsonFragment | undefined> {
  const { total, pages } = pagingOf(serialized, pageChars);
  if (!Number.isInteger(page) || page < 0 || page >= pages) return undefined;
  const advance = codePointWalk(serialized);
  const start = advance(0, page * pageChars);
  const text = serialized.slice(start, advance(start, pageChars));
  const sha256 = await sha256Hex(serialized);
  return { type: "json_fragment", page, pages, offset: page * pageChars, total_chars: total, sha256, text };
}

/**
 * A walk forward through a text by code points: `advance(from, count)` is the UTF-16 index `count` code points after
 * `from` (or the text's end), never between the halves of a pair. Up to the next surrogate every unit is a code
 * point, so a run without surrogates is crossed by one native search, remembered until the walk passes it: cutting
 * a whole text costs one pass, whatever the page size.
 */
function codePointWalk(text: string): (from: number, count: number) => number {
  const surrogate = /[\uD800-\uDFFF]/g;
  let next = -1;
  return function advance(from, count) {
    if (next < from) {
      surrogate.lastIndex = from;
      next = surrogate.exec(text)?.index ?? text.length;
    }
    if (next - from >= count) return Math.min(from + count, text.length);
    let index = next;
    let left = count - (next - from);
    while (left > 0 && index < text.length) {
      const unit = text.charCodeAt(index);
      const pair = unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length && isLowSurrogate(text, index + 1);
      index += pair ? 2 : 1;
      left -= 1;
    }
    next = -1;
    return index;
  };
}

function isLowSurrogate(text: string, index: number): boolean {
  const unit = text.charCodeAt(index);
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The sizes at which a controller is asked to write a checkpoint: 4,000 bytes of results, 2,000 of log. */
export const defaultCheckpointBytes = { results: 4000, log: 2000 };

/**
 * Whether a controller's accumulated results or log have grown past the point where it should write a checkpoint
 * and continue from it: an advice, never a limit the gateway enforces.
 */
export function checkpointDue(
  sizes: { resultsBytes: number; logBytes: number },
  limits: { resultsBytes?: number; logBytes?: number } = {},
): boolean {
  const results = limits.resultsBytes ?? defaultCheckpointBytes.results;
  const log = limits.logBytes ?? defaultCheckpointBytes.log;
  return sizes.resultsBytes > results || sizes.logBytes > log;
}
