import { describe, expect, it } from "vitest";
import { checkCitations } from "../../src/window/index.js";

describe("checkCitations", () => {
  const index = ["S1", "S2", "S3"];

  it("takes out unknown and repeated source ids, keeping the rest in order, and says what it took", () => {
    const answer = {
      text: "…",
      citations: [{ source_id: "S2" }, { source_id: "S9" }, { source_id: "S2" }, { source_id: "S1", quote: "q" }],
    };
    const checked = checkCitations(answer, index);
    expect(checked.answer).toEqual({ text: "…", citations: [{ source_id: "S2" }, { source_id: "S1", quote: "q" }] });
    expect(checked.removed).toEqual([
      { path: "/citations/1", source_id: "S9", reason: "unknown" },
      { path: "/citations/2", source_id: "S2", reason: "duplicate" },
    ]);
    // The input is left as it was.
    expect(answer.citations).toHaveLength(4);
  });

  it("follows a pointer with wildcards, counts duplicates across the whole answer, and takes string citations", () => {
    const answer = {
      findings: [
        { id: "F1", evidence_refs: ["S1", "S4"] },
        { id: "F2", evidence_refs: ["S1", "S3"] },
      ],
    };
    const checked = checkCitations(answer, index, { at: "/findings/*/evidence_refs" });
    expect(checked.answer).toEqual({
      findings: [
        { id: "F1", evidence_refs: ["S1"] },
        { id: "F2", evidence_refs: ["S3"] },
      ],
    });
    expect(checked.removed.map((entry) => [entry.path, entry.reason])).toEqual([
      ["/findings/0/evidence_refs/1", "unknown"],
      ["/findings/1/evidence_refs/0", "duplicate"],
    ]);
  });

  it("takes out a citation that names no string source id: a number, an object, null, an array, none", () => {
    const answer = {
      citations: [{ source_id: 1 }, { source_id: { id: "S1" } }, { source_id: null }, {}, 7, null, ["S1"], "S1"],
    };
    const checked = checkCitations(answer, index);
    expect(checked.answer).toEqual({ citations: ["S1"] });
    expect(checked.removed).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((at) => ({ path: `/citations/${at}`, source_id: null, reason: "unknown" })),
    );
  });

  it("leaves an answer without citations where the pointer leads, and refuses a pointer that is none", () => {
    expect(checkCitations({ other: 1 }, index)).toEqual({ answer: { other: 1 }, removed: [] });
    expect(checkCitations("text", index)).toEqual({ answer: "text", removed: [] });
    expect(() => checkCitations({}, index, { at: "citations" })).toThrow(TypeError);
  });
});
