/**
 * The candidate a misspelt name most likely meant: the nearest by edit distance, if it is near enough to
 * be a slip (at most 2 edits, or a quarter of the name's length for a long one); undefined otherwise.
 */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  const allowed = Math.max(2, Math.floor(name.length / 4));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= allowed ? best : undefined;
}

/** Levenshtein distance: the fewest insertions, deletions and substitutions that turn one into the other. */
function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const substitution = previous[column - 1]! + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column]! + 1, current[column - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length]!;
}
