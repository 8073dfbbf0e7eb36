/**
 * Which passages are near-duplicates of those chosen so far: two passages are when their word sets (lowercased runs
 * of letters and digits) have a Jaccard similarity of at least `threshold`. Exact, without comparing every pair:
 * each set is ordered rarest word first (by how many of the passages hold it), and two sets that reach the
 * threshold share a word among the first few of each (the prefix filter of set-similarity joins), so a candidate
 * is compared in full only with the chosen passages whose first words meet its own; words every passage holds
 * (boilerplate, "the") come last and are never looked up.
 */
export function nearDuplicates(texts: readonly string[], threshold: number) {
  const ids = new Map<string, number>();
  const holding: number[] = [];
  const sets = texts.map((text) => {
    const words = new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
    const set = new Int32Array(words.size);
    let at = 0;
    for (const word of words) {
      let id = ids.get(word);
      if (id === undefined) {
        id = holding.length;
        ids.set(word, id);
        holding.push(0);
      }
      holding[id] = (holding[id] as number) + 1;
      set[at++] = id;
    }
    return set;
  });
  // Words renumbered rarest first (a counting sort by how many passages hold each), so that sets sort as numbers.
  const firstOf = new Uint32Array(texts.length + 2);
  for (const count of holding) firstOf[count + 1] = (firstOf[count + 1] as number) + 1;
  for (let count = 1; count < firstOf.length; count++) {
    firstOf[count] = (firstOf[count] as number) + (firstOf[count - 1] as number);
  }
  const rank = holding.map((count) => {
    const at = firstOf[count] as number;
    firstOf[count] = at + 1;
    return at;
  });
  for (const set of sets) {
    for (let at = 0; at < set.length; at++) set[at] = rank[set[at] as number] as number;
    set.sort();
  }

  /** By word: the chosen passages whose prefix holds it. */
  const prefixHolders: (number[] | undefined)[] = [];
  const chosen: Int32Array[] = [];
  let emptyChosen = 0;
  /** The candidate's words and the chosen passages already compared with it, marked with its number. */
  const marked = new Uint32Array(holding.length);
  const compared: number[] = [];
  let candidate = 0;

  /**
   * How many of a set's first words meet a word of any set it is similar to: past `size - ceil(threshold * size)`,
   * the shared words it needs could all lie in the rest. One more, and rounded down a little, to stay on the safe
   * side of floating point; a longer prefix only compares more.
   */
  const prefixOf = (size: number) => Math.min(size, size - Math.ceil(threshold * size - 1e-9) + 1);

  /** The Jaccard similarity of the marked candidate (of `size` words) and a chosen set, or 0 below the threshold. */
  function similarity(size: number, other: Int32Array): number {
    const most = Math.min(size, other.length);
    if (most / (size + other.length - most) < threshold) return 0;
    let shared = 0;
    for (const id of other) if (marked[id] === candidate) shared += 1;
    return shared / (size + other.length - shared);
  }

  return {
    /** Whether passage `index` is a near-duplicate of a chosen one. */
    isNearDuplicate(index: number): boolean {
      if (chosen.length === 0) return false;
      if (threshold <= 0) return true;
      const set = sets[index] as Int32Array;
      if (set.length === 0) return emptyChosen > 0;
      candidate += 1;
      for (const id of set) marked[id] = candidate;
      const prefix = prefixOf(set.length);
      for (let at = 0; at < prefix; at++) {
        for (const other of prefixHolders[set[at] as number] ?? []) {
          if (compared[other] === candidate) continue;
          compared[other] = candidate;
          if (similarity(set.length, chosen[other] as Int32Array) >= threshold) return true;
        }
      }
      return false;
    },

    /** Counts passage `index` as chosen. */
    choose(index: number): void {
      const set = sets[index] as Int32Array;
      const number = chosen.length;
      chosen.push(set);
      compared.push(0);
      if (set.length === 0) emptyChosen += 1;
      for (let at = 0; at < prefixOf(set.length); at++) {
        const id = set[at] as number;
        const holders = prefixHolders[id] ?? [];
        holders.push(number);
        prefixHolders[id] = holders;
      }
    },
  };
}
