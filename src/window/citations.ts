/** A citation taken out of an answer, by where it stood: never its text, only its id. */
export interface RemovedCitation {
  /** JSON Pointer of the citation as it stood in the answer. */
  path: string;
  /** The source id it named; null for one that named none as a string (a number, an object, null, no id at all). */
  source_id: string | null;
  reason: "unknown" | "duplicate";
}

/** What to check: where the citations stand, and what names their source. */
export interface CitationOptions {
  /**
   * JSON Pointer of the arrays of citations, where `*` stands for every member or item on the way, e.g.
   * `/findings/*\/citations`. Default `/citations`.
   */
  at?: string;
  /** The member of a citation object that names its source. Default `source_id`; a citation that is a string is its own id. */
  field?: string;
}

type Json = unknown;

function isRecord(value: Json): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function pointerSegment(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** The arrays a pointer pattern reaches, each with its own pointer. */
function arraysAt(value: Json, segments: string[], path: string, found: { array: Json[]; path: string }[]): void {
  if (segments.length === 0) {
    if (Array.isArray(value)) found.push({ array: value, path });
    return;
  }
  const [head, ...rest] = segments as [string, ...string[]];
  if (head === "*") {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) arraysAt(item, rest, `${path}/${index}`, found);
    } else if (isRecord(value))
      for (const [key, member] of Object.entries(value))
        arraysAt(member, rest, `${path}/${pointerSegment(key)}`, found);
    return;
  }
  const key = head.replaceAll("~1", "/").replaceAll("~0", "~");
  if (Array.isArray(value) && /^(0|[1-9]\d*)$/.test(key)) arraysAt(value[Number(key)], rest, `${path}/${key}`, found);
  else if (isRecord(value) && Object.hasOwn(value, key)) arraysAt(value[key], rest, `${path}/${head}`, found);
}

/**
 * Seeds 003 and 004: a model's citations are checked against the source index before the answer goes on. A citation
 * that names no source id the index holds (an unknown id, or no string id at all: a number, an object, null, a
 * citation without the field), or that repeats an id already cited in the answer, is taken out; the rest stay in
 * their order. Returns the checked answer (the input is not changed) and what was taken out, by path
 * and id only.
 */
export function checkCitations(
  answer: Json,
  index: Iterable<string>,
  options: CitationOptions = {},
): { answer: Json; removed: RemovedCitation[] } {
  const known = new Set(index);
  const field = options.field ?? "source_id";
  const at = options.at ?? "/citations";
  if (at !== "" && !at.startsWith("/")) throw new TypeError("'at' must be a JSON Pointer, such as /citations.");
  const checked = structuredClone(answer);
  const arrays: { array: Json[]; path: string }[] = [];
  arraysAt(checked, at === "" ? [] : at.slice(1).split("/"), "", arrays);
  const cited = new Set<string>();
  const removed: RemovedCitation[] = [];
  for (const { array, path } of arrays) {
    const kept: Json[] = [];
    array.forEach((citation, position) => {
      const named = typeof citation === "string" ? citation : isRecord(citation) ? citation[field] : undefined;
      // Only a string names a source: an id of another type cannot be one the index holds, whatever it prints as.
      const id = typeof named === "string" ? named : null;
      if (id !== null && known.has(id) && !cited.has(id)) {
        cited.add(id);
        kept.push(citation);
        return;
      }
      const reason = id !== null && known.has(id) ? "duplicate" : "unknown";
      removed.push({ path: `${path}/${position}`, source_id: id, reason });
    });
    array.splice(0, array.length, ...kept);
  }
  return { answer: checked, removed };
}
