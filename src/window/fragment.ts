import { sha256Hex } from "../json/sha256-hex.js";
import { codePoints } from "./code-points.js";

/** One page of a large result, as a controller hands it to a model (seed 001). */
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

/** A page's size when none is given: seed 001's 1,600 characters. */
export const defaultPageChars = 1600;

/** The most code points a page may be asked to hold: a page is meant to fit a bounded window. */
export const maxPageChars = 1_000_000;

/**
 * Serializes `value` once as compact JSON and cuts it into pages of at most `pageChars` code points (the gateway's
 * unit), each a `json_fragment` with its place and the SHA-256 of the whole. The pages' texts concatenated are the
 * serialization exactly; a surrogate pair is never split. A value without a JSON form (undefined, a function) is
 * refused with a TypeError, as is a page size that is not a whole number from 1 to 1,000,000.
 */
export async function fragment(value: unknown, options: { pageChars?: number } = {}): Promise<JsonFragment[]> {
  const pageChars = options.pageChars ?? defaultPageChars;
  if (!Number.isInteger(pageChars) || pageChars < 1 || pageChars > maxPageChars) {
    throw new TypeError(`pageChars must be a whole number from 1 to ${maxPageChars}.`);
  }
  const serialized = JSON.stringify(value) as string | undefined;
  if (serialized === undefined) throw new TypeError("The value has no JSON form.");
  return pagesOf(serialized, pageChars);
}

/** The pages of a serialized result (see `fragment`), for a result serialized once and kept. */
export async function pagesOf(serialized: string, pageChars: number): Promise<JsonFragment[]> {
  const total = codePoints(serialized);
  const sha256 = await sha256Hex(serialized);
  const pages = Math.max(1, Math.ceil(total / pageChars));
  const fragments: JsonFragment[] = [];
  // Walks the text by UTF-16 index, counting code points, so that each cut falls between two code points.
  let index = 0;
  for (let page = 0; page < pages; page++) {
    const start = index;
    let taken = 0;
    while (taken < pageChars && index < serialized.length) {
      const unit = serialized.charCodeAt(index);
      const pair =
        unit >= 0xd800 && unit <= 0xdbff && index + 1 < serialized.length && isLowSurrogate(serialized, index + 1);
      index += pair ? 2 : 1;
      taken += 1;
    }
    const text = serialized.slice(start, index);
    fragments.push({ type: "json_fragment", page, pages, offset: page * pageChars, total_chars: total, sha256, text });
  }
  return fragments;
}

function isLowSurrogate(text: string, index: number): boolean {
  const unit = text.charCodeAt(index);
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The sizes at which seed 001 asks a controller to write a checkpoint: 4,000 bytes of results, 2,000 of log. */
export const defaultCheckpointBytes = { results: 4000, log: 2000 };

/**
 * Whether a controller's accumulated results or log have grown past the point where it should write a checkpoint
 * and continue from it (seed 001): an advice, never a limit the gateway enforces.
 */
export function checkpointDue(
  sizes: { resultsBytes: number; logBytes: number },
  limits: { resultsBytes?: number; logBytes?: number } = {},
): boolean {
  const results = limits.resultsBytes ?? defaultCheckpointBytes.results;
  const log = limits.logBytes ?? defaultCheckpointBytes.log;
  return sizes.resultsBytes > results || sizes.logBytes > log;
}
