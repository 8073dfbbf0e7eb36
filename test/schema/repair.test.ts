import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import type { RepairRule } from "../../src/policy/policy.js";
import { applyRepair } from "../../src/schema/repair.js";

/** The rule of policies/investigation.bounded.toml (contract section 6). */
const unwrapQueryChoices: RepairRule = {
  name: "unwrap-query-choices",
  at: "/next/arguments",
  when: { pointer: "/next/action", equals: "tool/project.query" },
  envelope: "choices",
  require_key: "kind",
};

const query = { kind: "sql", query: "select id, state from jobs where entity = 'N12'", limit: 50 };

/** A bootstrap v22 answer whose `next` is the given action. */
function answerWith<Next>(next: Next) {
  return {
    assessment: { summary: "Job N12 stalls after the retry.", confidence: "medium", hypothesis_status: "open" },
    update: {
      working_brief: {
        findings: [
          {
            id: "F1",
            direction: "supports",
            text: "Retries stop at 3.",
            scope: "jobs, last 24h",
            evidence_refs: ["E000001"],
          },
        ],
      },
      retired: [],
      next_step: { intent: "Check the job states.", expected_signal: "A state other than done." },
    },
    next,
  };
}

/** The seed case: a project query whose arguments came back wrapped in a one-element `choices`. */
function wrappedQuery(argumentsValue: unknown = { choices: [query] }, action = "tool/project.query") {
  return answerWith({ action, arguments: argumentsValue, rationale: "The job table shows the state." });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

function bootstrapValidator() {
  const schema = JSON.parse(
    readFileSync(new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url), "utf8"),
  ) as object;
  const ajv = new Ajv2020({ strict: true, discriminator: true, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

describe("applyRepair: the declared unwrap", () => {
  it("replaces a one-element choices envelope by its element and names the rule", () => {
    const outcome = applyRepair(wrappedQuery(), [unwrapQueryChoices]);
    expect(outcome).toEqual({ repaired: wrappedQuery(query), rule: "unwrap-query-choices" });
  });

  it("turns the seed answer that fails the v22 schema into one that passes it", () => {
    const validate = bootstrapValidator();
    const original = wrappedQuery();
    expect(validate(original)).toBe(false);
    const outcome = applyRepair(original, [unwrapQueryChoices]);
    expect(validate(outcome?.repaired)).toBe(true);
  });

  it("applies the rule exactly as the shipped investigation.bounded policy declares it", () => {
    const policy = parse(readFileSync(new URL("../../policies/investigation.bounded.toml", import.meta.url), "utf8"));
    const rules = policy.repair as unknown as RepairRule[];
    expect(rules).toEqual([unwrapQueryChoices]);
    expect(applyRepair(wrappedQuery(), rules)?.repaired).toEqual(wrappedQuery(query));
  });

  it("never adds a missing value: an unwrapped query without offset stays without offset", () => {
    const outcome = applyRepair(wrappedQuery({ choices: [{ kind: "sql", query: "select 1" }] }), [unwrapQueryChoices]);
    const repaired = outcome?.repaired as ReturnType<typeof wrappedQuery>;
    expect(repaired.next.arguments).toEqual({ kind: "sql", query: "select 1" });
  });

  it("leaves every other field and id exactly as they were", () => {
    const original = wrappedQuery();
    const repaired = applyRepair(original, [unwrapQueryChoices])?.repaired as ReturnType<typeof wrappedQuery>;
    expect({ ...repaired, next: { ...repaired.next, arguments: null } }).toEqual({
      ...original,
      next: { ...original.next, arguments: null },
    });
  });

  it("accepts an element whose required key holds any value, leaving its check to validation", () => {
    const outcome = applyRepair(wrappedQuery({ choices: [{ kind: "graph", query: "q" }] }), [unwrapQueryChoices]);
    expect(outcome?.rule).toBe("unwrap-query-choices");
  });
});

describe("applyRepair: refusals", () => {
  const refusals: [string, unknown][] = [
    ["two alternatives", wrappedQuery({ choices: [query, { ...query, kind: "log_search" }] })],
    ["an empty envelope", wrappedQuery({ choices: [] })],
    ["a sibling field next to the envelope", wrappedQuery({ choices: [query], note: "picked the first" })],
    ["a sibling that is itself the required key", wrappedQuery({ choices: [query], kind: "sql" })],
    ["an unknown action", wrappedQuery({ choices: [query] }, "tool/project.search")],
    ["another known action", wrappedQuery({ choices: [query] }, "recall")],
    ["an element without the required kind", wrappedQuery({ choices: [{ query: "select 1", offset: 0 }] })],
    ["an element that is a string", wrappedQuery({ choices: ["select 1"] })],
    ["an element that is null", wrappedQuery({ choices: [null] })],
    ["an element that is an array", wrappedQuery({ choices: [[query]] })],
    ["an envelope that is an object, not an array", wrappedQuery({ choices: query })],
    ["a differently named envelope", wrappedQuery({ options: [query] })],
    ["arguments that need no repair", wrappedQuery(query)],
    ["arguments that are an array", wrappedQuery([query])],
    ["an answer without next", { assessment: {}, update: {} }],
    ["an action without arguments", answerWith({ action: "tool/project.query", rationale: "r" })],
    ["an answer that is not an object", "tool/project.query"],
  ];

  for (const [description, answer] of refusals) {
    it(`refuses ${description}`, () => {
      expect(applyRepair(answer, [unwrapQueryChoices])).toBeUndefined();
    });
  }

  it("refuses when no rule is declared", () => {
    expect(applyRepair(wrappedQuery(), [])).toBeUndefined();
  });

  it("compares the guard strictly: the string '1' does not equal the number 1", () => {
    const rule: RepairRule = { ...unwrapQueryChoices, when: { pointer: "/next/version", equals: 1 } };
    const answer = answerWith({ action: "tool/project.query", version: "1", arguments: { choices: [query] } });
    expect(applyRepair(answer, [rule])).toBeUndefined();
    const matching = answerWith({ action: "tool/project.query", version: 1, arguments: { choices: [query] } });
    expect(applyRepair(matching, [rule])?.rule).toBe("unwrap-query-choices");
  });

  it("refuses when the guard pointer does not resolve", () => {
    const rule: RepairRule = { ...unwrapQueryChoices, when: { pointer: "/next/tool", equals: "tool/project.query" } };
    expect(applyRepair(wrappedQuery(), [rule])).toBeUndefined();
  });
});

describe("applyRepair: rules and pointers", () => {
  it("returns the first rule that applies, skipping the ones that do not", () => {
    const recallRule: RepairRule = {
      ...unwrapQueryChoices,
      name: "unwrap-recall-choices",
      when: { pointer: "/next/action", equals: "recall" },
    };
    const looseRule: RepairRule = { ...unwrapQueryChoices, name: "second" };
    expect(applyRepair(wrappedQuery(), [recallRule, unwrapQueryChoices, looseRule])?.rule).toBe("unwrap-query-choices");
  });

  it("follows ~1 and ~0 escapes in both the guard and the target pointer", () => {
    const rule: RepairRule = {
      name: "escaped",
      at: "/calls/tool~1project.query",
      when: { pointer: "/mode/a~1b~0c", equals: true },
      envelope: "choices",
      require_key: "kind",
    };
    const answer = { mode: { "a/b~c": true }, calls: { "tool/project.query": { choices: [query] } } };
    expect(applyRepair(answer, [rule])?.repaired).toEqual({
      mode: { "a/b~c": true },
      calls: { "tool/project.query": query },
    });
  });

  it("follows array indices in the target pointer", () => {
    const rule: RepairRule = {
      ...unwrapQueryChoices,
      at: "/steps/1/arguments",
      when: { pointer: "/steps/1/action", equals: "q" },
    };
    const answer = {
      steps: [
        { action: "q", arguments: {} },
        { action: "q", arguments: { choices: [query] } },
      ],
    };
    expect(applyRepair(answer, [rule])?.repaired).toEqual({
      steps: [
        { action: "q", arguments: {} },
        { action: "q", arguments: query },
      ],
    });
  });
});

describe("applyRepair: purity", () => {
  it("never mutates a deep-frozen answer", () => {
    const answer = deepFreeze(wrappedQuery());
    const before = structuredClone(answer);
    expect(() => applyRepair(answer, [unwrapQueryChoices])).not.toThrow();
    expect(answer).toEqual(before);
  });
});
