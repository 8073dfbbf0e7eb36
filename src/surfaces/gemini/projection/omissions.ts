/**
 * The list of what a projection left out, as `"<JSON pointer>: <what>"` entries in the order
 * they were found, each once. Entries deeper than `maxDepth` object/array levels are not kept
 * (the outer projection reports a whole nested structure as one entry instead).
 */
export class Omissions {
  readonly #entries = new Set<string>();

  constructor(readonly maxDepth = Number.POSITIVE_INFINITY) {}

  add(location: string, depth: number, what: string): void {
    if (depth > this.maxDepth) return;
    this.#entries.add(`${location === "" ? "/" : location}: ${what}`);
  }

  list(): string[] {
    return [...this.#entries];
  }
}
