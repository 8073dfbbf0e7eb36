import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateAnswer } from "../../src/schema/diagnostics.js";
import { validatorOf } from "../support/schema-validators.js";
import {
  type Alternative,
  chainAccepts,
  chainAnswer,
  chainSchema,
  failingAnswer,
  type Leaf,
  reproductionChain,
  type UnionChain,
} from "./union-chains.js";

// Runs on Node (Ajv) and inside workerd (the interpretive validator). Issue 51: an answer failing a `$ref` chain of
// unions blocked the serving thread 16 s at depth 7 and over 5 minutes at depth 8. Every validation now has a work
// budget; what runs out of it is invalid, with a first error of keyword `budget`.

const maxReported = 20;

function validate(chain: UnionChain, answer: unknown) {
  return validateAnswer(validatorOf(chainSchema(chain)), JSON.stringify(answer));
}

function expectCutShort(errors: readonly { validation_keyword: string; hint: string }[]) {
  expect(errors[0]).toEqual({
    validation_path: "",
    validation_keyword: "budget",
    hint: expect.stringContaining("cut short"),
  });
}

describe("the work budget of one validation", () => {
  it("reports the issue's answer to a chain 8 levels deep invalid, cut short, with a bounded number of errors", () => {
    const { valid, errors } = validate(reproductionChain(8), failingAnswer(8));
    expect(valid).toBe(false);
    expectCutShort(errors);
    expect(errors.length).toBeLessThanOrEqual(maxReported);
  });

  it("reports the answer to a chain 7 levels deep invalid with a bounded number of errors", () => {
    const { valid, errors } = validate(reproductionChain(7), failingAnswer(7));
    expect(valid).toBe(false);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.length).toBeLessThanOrEqual(maxReported);
  });

  it("reports an answer to a chain 16 levels deep only as cut short", () => {
    const { valid, errors } = validate(reproductionChain(16), failingAnswer(16));
    expect(valid).toBe(false);
    expect(errors).toHaveLength(1);
    expectCutShort(errors);
  });

  it("counts a 2019-09 $recursiveRef as a reference: a self-recursive union 14 levels deep is cut short", () => {
    const self = { $recursiveRef: "#" };
    const schema = {
      $schema: "https://json-schema.org/draft/2019-09/schema",
      $recursiveAnchor: true,
      anyOf: [
        { type: "object", properties: { v: self, k: { type: "string" } }, required: ["v"] },
        { type: "object", properties: { v: self, n: { type: "number" } }, required: ["v", "n"] },
        { type: "object", properties: { v: self }, additionalProperties: false, minProperties: 2 },
        { type: "integer" },
      ],
    };
    const { valid, errors } = validateAnswer(validatorOf(schema), JSON.stringify(failingAnswer(14)));
    expect(valid).toBe(false);
    expect(errors).toHaveLength(1);
    expectCutShort(errors);
    expect(validateAnswer(validatorOf(schema), JSON.stringify({ v: { v: { v: 3 } } }))).toEqual({
      valid: true,
      errors: [],
    });
  });

  it("keeps a valid answer to a shallow chain valid", () => {
    const chain = reproductionChain(4);
    expect(validate(chain, chainAnswer(chain, [0, 1, 2, 3], false))).toEqual({ valid: true, errors: [] });
  });

  it("grows with the answer: a valid answer of 20,000 nodes to a recursive schema is valid", () => {
    const { schema, answer } = largeTree();
    expect(validateAnswer(validatorOf(schema), JSON.stringify(answer))).toEqual({ valid: true, errors: [] });
  });

  it("grows with the answer: the same answer with one wrong name is invalid in full detail", () => {
    const { schema, answer } = largeTree();
    const children = answer.children as { children: { name: unknown }[] }[];
    (children[150]?.children[70] as { name: unknown }).name = 42;
    const { valid, errors } = validateAnswer(validatorOf(schema), JSON.stringify(answer));
    expect(valid).toBe(false);
    expect(errors).toEqual([expect.objectContaining({ validation_path: "/children/150/children/70/name" })]);
  });
});

/** A tree schema and a valid answer of 200 children of 100 children each. */
function largeTree(): { schema: unknown; answer: Record<string, unknown> } {
  const schema = {
    $defs: {
      node: {
        type: "object",
        properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
        required: ["name"],
      },
    },
    $ref: "#/$defs/node",
  };
  const leaf = (index: number) => ({ name: `leaf ${index}` });
  const branch = (index: number) => ({
    name: `branch ${index}`,
    children: Array.from({ length: 100 }, (_, i) => leaf(i)),
  });
  return { schema, answer: { name: "root", children: Array.from({ length: 200 }, (_, i) => branch(i)) } };
}

const alternatives: Alternative[] = ["object", "object-with-number", "array", "closed-object", "other-name"];
const leaves: Leaf[] = ["integer", "string", "boolean"];

/** Links of 1 to 4 alternatives of any kind. */
const anyLinks: fc.Arbitrary<Alternative[][]> = fc.array(
  fc.uniqueArray(fc.constantFrom(...alternatives), { minLength: 1, maxLength: 4 }),
  {
    minLength: 1,
    maxLength: 6,
  },
);

/** Links where three alternatives or more hold the next link under `v`, as in the issue: the work multiplies. */
const multiplyingLinks: fc.Arbitrary<Alternative[][]> = fc.array(
  fc.subarray<Alternative>(["array", "other-name"]).chain((others) =>
    fc.shuffledSubarray<Alternative>([...others, "object", "object-with-number", "closed-object"], {
      minLength: 3 + others.length,
    }),
  ),
  { minLength: 6, maxLength: 12 },
);

const chains: fc.Arbitrary<UnionChain> = fc.record({
  links: fc.oneof(anyLinks, multiplyingLinks),
  leaf: fc.constantFrom(...leaves),
});

/** Answers of the shapes the chains take, nested up to 12 levels, with leaves of every type. */
const { tree: randomAnswers } = fc.letrec<{ tree: unknown }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", maxDepth: 12 },
    fc.constantFrom(7, 1.5, "text", true, null),
    fc.record({ v: tie("tree") }),
    fc.record({ v: tie("tree"), n: fc.constantFrom(1, "one") }),
    fc.record({ w: tie("tree") }),
    fc.array(tie("tree"), { maxLength: 2 }),
  ),
}));

/** A chain and an answer: one it accepts by construction, the same with a wrong leaf, or one of any shape. */
const cases = chains.chain((chain) =>
  fc.record({
    chain: fc.constant(chain),
    answer: fc.oneof(
      fc.array(fc.nat(3), { minLength: 12, maxLength: 12 }).map((choices) => chainAnswer(chain, choices, false)),
      fc.array(fc.nat(3), { minLength: 12, maxLength: 12 }).map((choices) => chainAnswer(chain, choices, true)),
      randomAnswers,
    ),
  }),
);

/**
 * A bound on the references a validator follows for one answer: each value of the answer is checked at most once
 * per path through the alternatives above it, and there are at most as many as from the first link to the last.
 */
function referencesAtMost(chain: UnionChain, answer: unknown): number {
  const paths = chain.links.reduce((product, link) => product * link.length, 1);
  return (paths + 1) * valuesOf(answer);
}

function valuesOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 1;
  return (
    1 + (Array.isArray(value) ? value : Object.values(value)).reduce<number>((sum, child) => sum + valuesOf(child), 0)
  );
}

describe("generated chains of unions", () => {
  it("give every answer its oracle's verdict within the budget, past it at worst cut short, with at most 20 errors", () => {
    fc.assert(
      fc.property(cases, ({ chain, answer }) => {
        const { valid, errors } = validate(chain, answer);
        expect(errors.length).toBeLessThanOrEqual(maxReported);
        if (!chainAccepts(chain, answer)) {
          // An answer the schema rejects is never reported valid, however the work went.
          expect(valid).toBe(false);
          return;
        }
        if (referencesAtMost(chain, answer) <= 1_000) {
          // Within every validator's budget (2,000 references a pass at least): exactly the oracle's verdict.
          expect({ valid, errors }).toEqual({ valid: true, errors: [] });
        } else if (!valid) {
          // Past it, a valid answer may be cut short, and only that.
          expect(errors).toHaveLength(1);
          expectCutShort(errors);
        }
      }),
      { numRuns: 60 },
    );
  });
});
