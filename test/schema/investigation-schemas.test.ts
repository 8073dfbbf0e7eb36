import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { generateSync, type JsonSchema } from "json-schema-faker";
import { describe, expect, it } from "vitest";

type Schema = Record<string, unknown> & { $id: string; title: string; $defs: Record<string, Record<string, unknown>> };

function loadSchema(version: "v21" | "v22"): Schema {
  const url = new URL(`../../schemas/investigation_bootstrap_${version}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Schema;
}

const v21 = loadSchema("v21");
const v22 = loadSchema("v22");
const v22Size = JSON.stringify(v22).length;
const v21Size = JSON.stringify(v21).length;

function validatorFor(schema: Schema) {
  const ajv = new Ajv2020({ strict: true, discriminator: true, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

const validateV21 = validatorFor(v21);
const validateV22 = validatorFor(v22);

const finding = {
  id: "F1",
  direction: "supports",
  text: "The retry loop stops after three attempts.",
  scope: "job runs of N12, last 24 hours",
  evidence_refs: ["E000001", "E000004"],
};

/** An answer as the tests edit it: loose enough to hold the invalid shapes they build. */
interface Draft {
  assessment: Record<string, unknown>;
  update: {
    working_brief: { findings: unknown[]; open_questions?: string[] };
    retired: string[];
    next_step: Record<string, unknown>;
  };
  next: Record<string, unknown>;
  [extra: string]: unknown;
}

/** A valid v22 answer; `change` edits a fresh copy of it. */
function answer(change: (draft: Draft) => void = () => {}): unknown {
  const draft: Draft = {
    assessment: {
      summary: "Job N12 stalls after its third retry; the scheduler marks it done.",
      confidence: "medium",
      hypothesis_status: "open",
      entity_refs: ["N12", "N3"],
    },
    update: {
      working_brief: { findings: [structuredClone(finding)], open_questions: ["Does N3 share the queue?"] },
      retired: ["F0"],
      next_step: { intent: "Read the scheduler log for N12.", expected_signal: "A timeout before the third retry." },
    },
    next: {
      action: "tool/project.query",
      arguments: { kind: "log_search", query: "scheduler job=N12 retry", offset: 0, limit: 100, entity_refs: ["N12"] },
      rationale: "The log shows why the retry loop ends.",
    },
  };
  change(draft);
  return draft;
}

/** The errors as [instancePath, keyword] pairs, enough to say where and why a document failed. */
function failures(validate: (data: unknown) => boolean, data: unknown): [string, string][] {
  expect(validate(data)).toBe(false);
  const errors = (validate as unknown as { errors: ErrorObject[] }).errors;
  return errors.map((error) => [error.instancePath, error.keyword]);
}

describe("investigation bootstrap schemas", () => {
  it("compile with a strict Ajv 2020 that uses the discriminator", () => {
    expect(typeof validateV21).toBe("function");
    expect(typeof validateV22).toBe("function");
  });

  it("declare draft 2020-12 and distinct ids and titles", () => {
    for (const schema of [v21, v22]) expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(v22.$id).toBe("https://promptgate.local/schemas/investigation_bootstrap_v22.json");
    expect(v21.$id).toBe("https://promptgate.local/schemas/investigation_bootstrap_v21.json");
    expect(v21.title).not.toBe(v22.title);
  });

  it(`keep v22 at ${v22Size} characters of compact JSON (v21: ${v21Size}), within 2-5 KB`, () => {
    expect(v22Size).toBeGreaterThanOrEqual(2000);
    expect(v22Size).toBeLessThanOrEqual(5000);
  });

  it("give every id schema examples that its own pattern accepts", () => {
    const expected = { evidence_id: ["E000001"], finding_id: ["F1"], entity_ref: ["N12"] };
    for (const [name, examples] of Object.entries(expected)) {
      const definition = v22.$defs[name]!;
      expect(definition.examples).toEqual(examples);
      for (const example of examples) expect(new RegExp(definition.pattern as string).test(example)).toBe(true);
    }
  });
});

describe("investigation_bootstrap_v22", () => {
  it("accepts a hand-written answer", () => {
    expect(validateV22(answer()), JSON.stringify(validateV22.errors)).toBe(true);
  });

  it("accepts each of the four actions", () => {
    const actions = [
      { action: "recall", arguments: { kind: "recall", evidence_refs: ["E000001"], page: 1 }, rationale: "Page 2." },
      { action: "checkpoint", arguments: { reason: "Session results pass 4000 bytes." }, rationale: "Consolidate." },
      { action: "finish", arguments: { diagnosis: "The retry cap is 3.", confidence: "high" }, rationale: "Done." },
    ];
    for (const next of actions) {
      const data = answer((draft) => {
        draft.next = next;
      });
      expect(validateV22(data)).toBe(true);
    }
  });

  it("accepts a finding with no evidence refs and a query with only kind and query", () => {
    const data = answer((draft) => {
      draft.update.working_brief.findings = [{ ...finding, evidence_refs: [] }];
      draft.next.arguments = { kind: "sql", query: "select 1" };
    });
    expect(validateV22(data)).toBe(true);
  });

  it("rejects a finding that is a string, at the finding's path", () => {
    const data = answer((draft) => {
      draft.update.working_brief.findings[0] = "F1 supports: retries stop at 3";
    });
    expect(failures(validateV22, data)).toEqual([["/update/working_brief/findings/0", "type"]]);
  });

  it("rejects an evidence id with the wrong pattern", () => {
    const data = answer((draft) => {
      draft.update.working_brief.findings = [{ ...finding, evidence_refs: ["E1"] }];
    });
    expect(failures(validateV22, data)).toEqual([["/update/working_brief/findings/0/evidence_refs/0", "pattern"]]);
  });

  it("rejects a repeated evidence id within one finding", () => {
    const data = answer((draft) => {
      draft.update.working_brief.findings = [{ ...finding, evidence_refs: ["E000001", "E000001"] }];
    });
    expect(failures(validateV22, data)).toEqual([["/update/working_brief/findings/0/evidence_refs", "uniqueItems"]]);
  });

  it("rejects a raw id where an N-reference belongs", () => {
    const data = answer((draft) => {
      draft.assessment.entity_refs = ["12"];
    });
    expect(failures(validateV22, data)).toEqual([["/assessment/entity_refs/0", "pattern"]]);
  });

  it("rejects an unknown action through the discriminator", () => {
    const data = answer((draft) => {
      draft.next.action = "tool/project.search";
    });
    expect(failures(validateV22, data)).toEqual([["/next", "discriminator"]]);
  });

  it("rejects a recall with two evidence refs, reporting only the recall alternative", () => {
    const data = answer((draft) => {
      draft.next = {
        action: "recall",
        arguments: { kind: "recall", evidence_refs: ["E000001", "E000002"], page: 0 },
        rationale: "Read both.",
      };
    });
    expect(failures(validateV22, data)).toEqual([["/next/arguments/evidence_refs", "maxItems"]]);
  });

  it("rejects a query whose arguments arrive in a choices envelope", () => {
    const data = answer((draft) => {
      draft.next.arguments = { choices: [draft.next.arguments] };
    });
    expect(failures(validateV22, data)).toContainEqual(["/next/arguments", "required"]);
  });

  it("rejects a query without kind, and never reads a missing offset as zero", () => {
    const data = answer((draft) => {
      draft.next.arguments = { query: "select 1", offset: -1 };
    });
    expect(failures(validateV22, data)).toEqual([
      ["/next/arguments", "required"],
      ["/next/arguments/offset", "minimum"],
    ]);
  });

  it("rejects a member the contract does not know", () => {
    const data = answer((draft) => {
      draft.notes = "extra";
    });
    expect(failures(validateV22, data)).toEqual([["", "additionalProperties"]]);
  });
});

describe("investigation_bootstrap_v21, the older contract", () => {
  /** The v22 answer without open questions, with the finding's evidence refs replaced. */
  const v21Answer = (evidenceRefs = finding.evidence_refs) =>
    answer((draft) => {
      delete draft.update.working_brief.open_questions;
      draft.update.working_brief.findings = [{ ...finding, evidence_refs: evidenceRefs }];
    });

  it("accepts the same answer without open questions", () => {
    expect(validateV21(v21Answer())).toBe(true);
  });

  it("does not know open questions, which v22 added", () => {
    expect(failures(validateV21, answer())).toEqual([["/update/working_brief", "additionalProperties"]]);
  });

  it("allows five evidence refs per finding where v22 allows eight", () => {
    const sixRefs = ["E000001", "E000002", "E000003", "E000004", "E000005", "E000006"];
    expect(validateV22(v21Answer(sixRefs))).toBe(true);
    expect(validateV21(v21Answer(sixRefs.slice(0, 5)))).toBe(true);
    expect(failures(validateV21, v21Answer(sixRefs))).toEqual([
      ["/update/working_brief/findings/0/evidence_refs", "maxItems"],
    ]);
  });
});

describe("documents faked from the schemas", () => {
  const seeds = Array.from({ length: 20 }, (_, index) => index + 1);

  // The faker counts every $ref it follows, recursive or not; finding → finding_id is two deep,
  // and its default depth limits turn deeper values into placeholders that break conformance.
  const fake = (schema: Schema, seed: number) => generateSync(schema as JsonSchema, { seed, refDepthMax: 3 });

  for (const [name, schema, validate] of [
    ["v21", v21, validateV21],
    ["v22", v22, validateV22],
  ] as const) {
    it(`${name}: every document of 20 seeds validates, and together they use all four actions`, () => {
      const actions = new Set<unknown>();
      for (const seed of seeds) {
        const document = fake(schema, seed) as { next: { action: unknown } };
        expect(validate(document), `seed ${seed}: ${JSON.stringify(validate.errors)}`).toBe(true);
        actions.add(document.next.action);
      }
      expect([...actions].sort()).toEqual(["checkpoint", "finish", "recall", "tool/project.query"]);
    });
  }
});
