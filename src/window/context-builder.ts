import { codePoints } from "./code-points.js";
import { nearDuplicates } from "./near-duplicates.js";
import { oneLine, passageText } from "./passage-text.js";

/** A retrieved passage: its text, where it comes from, and how relevant the retrieval found it. */
export interface Chunk {
  text: string;
  /** The document: a file name, a URL. */
  source: string;
  /** The page in the document, if it has pages. */
  page?: number | string | undefined;
  /** Relevance: higher first. */
  score: number;
}

/** How a context block is built. */
export interface ContextOptions {
  /** The block's size in code points, never exceeded. */
  limitChars: number;
  /** The most passages. Default 8. */
  topK?: number;
  /** The most passages of one document, so that not all come from one. Default 3. */
  maxPerDocument?: number;
  /**
   * Two passages whose word sets (lowercased runs of letters and digits) have a Jaccard similarity of at least this
   * are near-duplicates: only the more relevant one is kept. Default 0.8.
   */
  similarity?: number;
  /** The word before the number in each header. Default `Quelle`, e.g. `Source`. */
  label?: string;
  /** The word before a page number. Default `S.`, e.g. `p.`. */
  pageLabel?: string;
}

/** One passage of the block. */
export interface SelectedChunk {
  /** Its number in the block (`[Quelle n: …]`), from 1. */
  n: number;
  /** Its place in the input. */
  index: number;
  source: string;
  page?: number | string | undefined;
  score: number;
}

/** The block, what it holds, and its size. */
export interface ContextBlock {
  block: string;
  selected: SelectedChunk[];
  /** One entry per passage: the reference its header carries in the block (on one line). */
  sources: { n: number; reference: string }[];
  /** The block's size in code points, as the gateway counts it. */
  chars: number;
}

/**
 * What one request to `POST /promptgate/window/context` may hand in: chunks, their text in code points, and the
 * passages it may ask for in all and per document. A retrieval hands in tens of chunks and asks for about 8.
 */
export const contextRequestLimits = {
  maxChunks: 1_000,
  maxTextChars: 500_000,
  maxTopK: 100,
  maxPerDocument: 100,
} as const;

/** The separator between passages. */
export const contextSeparator = "\n\n---\n\n";

/**
 * A bounded context: chunks chosen by relevance (ties: by source, page, then input place), at most
 * `maxPerDocument` of one document, none a near-duplicate of one already chosen, up to `topK` and within
 * `limitChars` (a chunk that would cross the limit is passed over for a smaller, less relevant one); each as
 * `[Quelle n: file, S. p]` and its text, separated by `---`. A text's rule lines and lines opening with `[` are
 * escaped (`\---`, `\[…`) and a header's line breaks become spaces, so that every passage has one header, its own
 * (see `passageText`). The same input gives the same block, byte for byte.
 */
export function buildContext(chunks: readonly Chunk[], options: ContextOptions): ContextBlock {
  const topK = options.topK ?? 8;
  const maxPerDocument = options.maxPerDocument ?? 3;
  const threshold = options.similarity ?? 0.8;
  const label = oneLine(options.label ?? "Quelle");
  const pageLabel = oneLine(options.pageLabel ?? "S.");
  if (!Number.isInteger(options.limitChars) || options.limitChars < 0) {
    throw new TypeError("limitChars must be a whole number of code points, 0 or more.");
  }
  const order = chunks
    .map((chunk, index) => ({ chunk, index }))
    .sort(
      (a, b) =>
        b.chunk.score - a.chunk.score ||
        compare(a.chunk.source, b.chunk.source) ||
        compare(String(a.chunk.page ?? ""), String(b.chunk.page ?? "")) ||
        a.index - b.index,
    );
  const perDocument = new Map<string, number>();
  const chosen = nearDuplicates(
    chunks.map((chunk) => chunk.text),
    threshold,
  );
  const parts: string[] = [];
  const selected: SelectedChunk[] = [];
  const sources: { n: number; reference: string }[] = [];
  let chars = 0;
  for (const { chunk, index } of order) {
    if (selected.length >= topK) break;
    if ((perDocument.get(chunk.source) ?? 0) >= maxPerDocument) continue;
    const n = selected.length + 1;
    const reference = oneLine(`${chunk.source}${chunk.page === undefined ? "" : `, ${pageLabel} ${chunk.page}`}`);
    const part = `[${label} ${n}: ${reference}]\n${passageText(chunk.text)}`;
    const added = codePoints(part) + (parts.length === 0 ? 0 : codePoints(contextSeparator));
    // The cheap checks first: a passage that does not fit is passed over before its words are read.
    if (chars + added > options.limitChars) continue;
    if (chosen.isNearDuplicate(index)) continue;
    parts.push(part);
    chars += added;
    chosen.choose(index);
    perDocument.set(chunk.source, (perDocument.get(chunk.source) ?? 0) + 1);
    selected.push({
      n,
      index,
      source: chunk.source,
      ...(chunk.page === undefined ? {} : { page: chunk.page }),
      score: chunk.score,
    });
    sources.push({ n, reference });
  }
  const block = parts.join(contextSeparator);
  return { block, selected, sources, chars: codePoints(block) };
}

/** A code-unit order, the same on every runtime (no locale). */
function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
