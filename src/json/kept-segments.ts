import { bytesHash, sameBytes } from "./bytes-hash.js";
import type { Segment, TapeColumns } from "./tape.js";
import { ownColumns } from "./tape-columns.js";

/** What a value's scan tells of it, kept with its tokens. */
export type SegmentFacts = Pick<Segment, "depth" | "numberExcess">;

/**
 * Which values are kept: seen twice, dense in tokens (where a scan spends its time; a message's text is scanned at
 * memory speed anyway), found by a hash of their first bytes, with 4 MiB of bytes kept at most.
 */
export const segmentLimits = {
  prefixBytes: 128,
  minBytes: 256,
  maxBytes: 256 * 1024,
  minTokens: 64,
  bytesPerToken: 32,
  totalBytes: 4 * 1024 * 1024,
  perPrefix: 8,
};

const noSegments: Segment[] = [];

/**
 * The top-level values a scanner has kept (see `Segment`), one set per `JsonScanner`, whose scans run one at a time (a
 * scan never yields).
 */
export class KeptSegments {
  /** Kept values by the hash of their first bytes (the same for many), the newest first; least recently kept first. */
  readonly #segments = new Map<number, Segment[]>();
  /**
   * Values seen once, by what their scan told of them for free: their first bytes' hash, length, tokens and compact
   * code points (no hash of all their bytes, which a value that never recurs, e.g. a conversation of short messages,
   * would pay on every call); 1,024 at most. A value that only looks the same is kept once for nothing, never
   * mistaken: what is kept is the bytes scanned, and a kept value is taken only for the same bytes.
   */
  readonly #sightings = new Set<string>();
  /** The bytes the kept values hold, their aligned copies included. */
  #bytes = 0;

  /** The bytes the kept values hold, their copies included: never more than 4 MiB. */
  keptBytes(): number {
    return this.#bytes;
  }

  /** The hash a value at `at` in `bytes` is found by. */
  prefixOf(bytes: Uint8Array, at: number): number {
    return bytesHash(bytes, at, at + segmentLimits.prefixBytes);
  }

  /**
   * The kept value whose bytes stand at `at` in `bytes` (of `prefix`, see `prefixOf`), and whose nesting, counted from
   * the top-level object's member, stays within `maxDepth`; undefined when none does.
   */
  find(bytes: Uint8Array, at: number, prefix: number, maxDepth: number): Segment | undefined {
    const alignment = (bytes.byteOffset + at) & 3;
    const available = bytes.length - at;
    for (const segment of this.#segments.get(prefix) ?? noSegments) {
      const length = segment.bytes.length;
      if (length > available || segment.bytes[length - 1] !== bytes[at + length - 1]) continue;
      const aligned = segment.aligned[alignment];
      if (!sameBytes(aligned ?? segment.bytes, bytes, at, at + length)) continue;
      // Found at an alignment it has no copy for: one is made now, for the next body like this one (a value that only
      // looks the same costs none).
      if (aligned === undefined) {
        segment.aligned[alignment] = alignedCopy(segment.bytes, alignment);
        this.#bytes += length;
        this.#keepWithinLimit();
      }
      // Its nesting counts from here as it did where it was scanned: too deep here, the scan refuses it.
      if (1 + segment.depth <= maxDepth) return segment;
    }
    return undefined;
  }

  /**
   * Notes a value scanned into `columns` from token `first` (to `count`) and from byte `at` (to `end`) of `bytes`; the
   * second time it is seen, keeps its tokens. Only a value dense enough in tokens is noted (see `segmentLimits`).
   */
  sighted(
    bytes: Uint8Array,
    columns: TapeColumns,
    prefix: number,
    first: number,
    count: number,
    at: number,
    end: number,
    facts: SegmentFacts,
  ): void {
    const tokens = count - first;
    const length = end - at;
    if (
      tokens < segmentLimits.minTokens ||
      length > segmentLimits.maxBytes ||
      length > tokens * segmentLimits.bytesPerToken
    ) {
      return;
    }
    const sightings = this.#sightings;
    const sighting = `${prefix} ${length} ${tokens} ${columns.compact[first]}`;
    if (!sightings.delete(sighting)) {
      sightings.add(sighting);
      if (sightings.size > 1024) sightings.delete(sightings.values().next().value as string);
      return;
    }
    const kept = ownColumns(tokens);
    moveTokens(columns, first, kept, 0, tokens, -at);
    const copy = bytes.slice(at, end);
    const segment: Segment = { bytes: copy, aligned: [copy], columns: kept, values: new Map(), ...facts };
    const segments = this.#segments;
    const others = segments.get(prefix) ?? [];
    segments.delete(prefix);
    segments.set(prefix, [segment, ...others.slice(0, segmentLimits.perPrefix - 1)]);
    this.#bytes += length;
    for (const dropped of others.slice(segmentLimits.perPrefix - 1)) this.#bytes -= heldBytes(dropped);
    this.#keepWithinLimit();
  }

  /** Forgets the values kept longest until the rest hold no more than the limit. */
  #keepWithinLimit(): void {
    for (const [oldest, list] of this.#segments) {
      if (this.#bytes <= segmentLimits.totalBytes) break;
      this.#segments.delete(oldest);
      for (const dropped of list) this.#bytes -= heldBytes(dropped);
    }
  }
}

/**
 * Copies `count` tokens of `from`, from token `first` on, into `into` at token `to`: their byte offsets moved by
 * `bytes`, and the token each one's subtree ends before (`next`) by as many tokens as they move.
 */
export function moveTokens(
  from: TapeColumns,
  first: number,
  into: TapeColumns,
  to: number,
  count: number,
  bytes: number,
): void {
  // One loop over every column: no view of a column is made for a copy.
  const tokens = to - first;
  for (let token = 0; token < count; token++) {
    const source = first + token;
    const target = to + token;
    into.kind[target] = from.kind[source] as number;
    into.size[target] = from.size[source] as number;
    into.compact[target] = from.compact[source] as number;
    into.flags[target] = from.flags[source] as number;
    into.start[target] = (from.start[source] as number) + bytes;
    into.end[target] = (from.end[source] as number) + bytes;
    into.next[target] = (from.next[source] as number) + tokens;
  }
}

/** The bytes a kept value holds, its copies included. */
function heldBytes(segment: Segment): number {
  let bytes = 0;
  for (const copy of segment.aligned) bytes += copy?.length ?? 0;
  return bytes;
}

/** A copy of `bytes` that starts `alignment` bytes into a word. */
function alignedCopy(bytes: Uint8Array, alignment: number): Uint8Array {
  const copy = new Uint8Array(new ArrayBuffer(bytes.length + alignment), alignment, bytes.length);
  copy.set(bytes);
  return copy;
}
