import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkCitations } from "../../src/window/citations.js";

// An independent statement of the citation rule (seeds 003, 004), checked on generated answers: walking the arrays of
// citations in document order, a citation is kept when it names a string id that is in the index and was not kept
// before; every other citation is removed: as "duplicate" when its id was kept before, else as "unknown" (an id not
// in the index, and a citation naming no string id: a number, an object, null, an array, a missing or non-string
// source_id, recorded with source_id null). The answer is otherwise unchanged, and the input is never modified.

const ids: fc.Arbitrary<string> = fc.constantFrom("D1", "D2", "D3", "X1", "X2", "a/b", "~0");
const citation = fc.oneof(
  { weight: 4, arbitrary: ids.map((id) => ({ source_id: id })) },
  { weight: 2, arbitrary: ids },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom({ note: "no id" }, 7, null, true, ["D1"], { source_id: 3 }, { source_id: null }),
      ids.map((id) => ({ source_id: { id } })),
      ids.map((id) => ({ source_id: [id] })),
      fc.double().map((id) => ({ source_id: id })),
    ),
  },
);
const finding = fc.record({ text: fc.string({ maxLength: 5 }), citations: fc.array(citation, { maxLength: 6 }) });
const answer = fc.record({ summary: fc.string({ maxLength: 5 }), findings: fc.array(finding, { maxLength: 4 }) });
const index = fc.uniqueArray(ids, { maxLength: 5 });

function idOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const id = (value as Record<string, unknown>).source_id;
    return typeof id === "string" ? id : null;
  }
  return null;
}

describe("checkCitations against an independent statement of its rule", () => {
  it("keeps each indexed id's first citation, removes every other citation by reason, and changes nothing else", () => {
    fc.assert(
      fc.property(answer, index, (given, sources) => {
        const before = structuredClone(given);
        const { answer: checked, removed } = checkCitations(given, sources, { at: "/findings/*/citations" });
        expect(given).toEqual(before);
        const seen = new Set<string>();
        const expectedRemoved: unknown[] = [];
        const expected = {
          ...given,
          findings: given.findings.map((item, at) => ({
            ...item,
            citations: item.citations.filter((value, position) => {
              const id = idOf(value);
              const reason = id === null || !sources.includes(id) ? "unknown" : seen.has(id) ? "duplicate" : undefined;
              if (reason === undefined && id !== null) {
                seen.add(id);
                return true;
              }
              expectedRemoved.push({ path: `/findings/${at}/citations/${position}`, source_id: id, reason });
              return false;
            }),
          })),
        };
        expect(checked).toEqual(expected);
        expect(removed).toEqual(expectedRemoved);
      }),
      { numRuns: 2_000, seed: 17 },
    );
  });
});
