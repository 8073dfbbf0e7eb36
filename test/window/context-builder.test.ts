import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildContext, type Chunk } from "../../src/window/index.js";

// Seed 002's bounded context block, against properties checked by code written apart from it: its own word sets
// and Jaccard, Array.from for code points.

const word = fc.constantFrom("Auftrag", "klärung", "Skala", "frage", "Ressource", "Stärke", "😀", "coaching", "a", "b");
const chunk: fc.Arbitrary<Chunk> = fc.record({
  text: fc.array(word, { minLength: 1, maxLength: 30 }).map((words) => words.join(" ")),
  source: fc.constantFrom("Systemisches Coaching.pdf", "Methodenhandbuch.pdf", "Grundlagen.pdf", "notes.md"),
  page: fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined }),
  score: fc.integer({ min: 0, max: 5 }).map((score) => score / 5),
});

function ownWords(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

function ownJaccard(left: string, right: string): number {
  const a = ownWords(left);
  const b = ownWords(right);
  const shared = [...a].filter((item) => b.has(item)).length;
  const union = new Set([...a, ...b]).size;
  return union === 0 ? 1 : shared / union;
}

describe("buildContext", () => {
  it("keeps every rule: the limit, top_k, diversity, no near-duplicates, one source per passage, a stable order", () => {
    fc.assert(
      fc.property(
        fc.array(chunk, { maxLength: 25 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 4 }),
        (chunks, limitChars, topK, maxPerDocument) => {
          const built = buildContext(chunks, { limitChars, topK, maxPerDocument });
          expect(buildContext(chunks, { limitChars, topK, maxPerDocument })).toEqual(built);
          expect(built.chars).toBe(Array.from(built.block).length);
          expect(built.chars).toBeLessThanOrEqual(limitChars);
          expect(built.selected.length).toBeLessThanOrEqual(topK);
          const parts = built.block === "" ? [] : built.block.split("\n\n---\n\n");
          expect(parts).toHaveLength(built.selected.length);
          expect(built.sources).toHaveLength(built.selected.length);
          const perDocument = new Map<string, number>();
          for (const [position, chosen] of built.selected.entries()) {
            const input = chunks[chosen.index] as Chunk;
            const reference = input.page === undefined ? input.source : `${input.source}, S. ${input.page}`;
            expect(chosen.n).toBe(position + 1);
            expect(built.sources[position]).toEqual({ n: position + 1, reference });
            expect(parts[position]).toBe(`[Quelle ${position + 1}: ${reference}]\n${input.text}`);
            perDocument.set(input.source, (perDocument.get(input.source) ?? 0) + 1);
            if (position > 0) expect(chosen.score).toBeLessThanOrEqual(built.selected[position - 1]?.score ?? 1);
            for (const earlier of built.selected.slice(0, position)) {
              expect(ownJaccard(input.text, (chunks[earlier.index] as Chunk).text)).toBeLessThan(0.8);
            }
          }
          for (const count of perDocument.values()) expect(count).toBeLessThanOrEqual(maxPerDocument);
          expect(new Set(built.selected.map((chosen) => chosen.index)).size).toBe(built.selected.length);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("formats seed 002's block, with a configurable label", () => {
    const chunks: Chunk[] = [
      { text: "Die Auftragsklärung ist der erste Schritt.", source: "Systemisches Coaching.pdf", page: 12, score: 0.9 },
      { text: "Skalenfragen ermöglichen eine Einschätzung.", source: "Methodenhandbuch.pdf", page: 45, score: 0.8 },
      { text: "Die Auftragsklärung ist der erste Schritt!", source: "Kopie.pdf", page: 1, score: 0.7 },
    ];
    const built = buildContext(chunks, { limitChars: 10_000 });
    expect(built.block).toBe(
      "[Quelle 1: Systemisches Coaching.pdf, S. 12]\nDie Auftragsklärung ist der erste Schritt.\n\n---\n\n" +
        "[Quelle 2: Methodenhandbuch.pdf, S. 45]\nSkalenfragen ermöglichen eine Einschätzung.",
    );
    const english = buildContext(chunks, { limitChars: 10_000, label: "Source", pageLabel: "p." });
    expect(english.sources).toEqual([
      { n: 1, reference: "Systemisches Coaching.pdf, p. 12" },
      { n: 2, reference: "Methodenhandbuch.pdf, p. 45" },
    ]);
    expect(english.block.startsWith("[Source 1: Systemisches Coaching.pdf, p. 12]\n")).toBe(true);
  });

  it("passes over a passage too large for what is left, for a smaller, less relevant one", () => {
    const chunks: Chunk[] = [
      { text: "x".repeat(50), source: "a.pdf", score: 1 },
      { text: "y".repeat(500), source: "b.pdf", score: 0.9 },
      { text: "z".repeat(20), source: "c.pdf", score: 0.5 },
    ];
    const built = buildContext(chunks, { limitChars: 120 });
    expect(built.selected.map((chosen) => chosen.source)).toEqual(["a.pdf", "c.pdf"]);
  });
});
