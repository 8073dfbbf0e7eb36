import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { ajvSchemaCompiling } from "../../src/schema/compile-schema.js";
import { type Validation, validateParsedAnswer } from "../../src/schema/diagnostics.js";
import { createSchemaValidators, type SchemaValidators } from "../../src/schema/schema-validators.js";

// The interpretive validator (Workers) against Ajv (Node), on the features a client's schema uses: the same
// refusals, the same outcome and the same diagnostics for every answer. Runs on Node and inside workerd.

const ajv = createSchemaValidators({ compiling: ajvSchemaCompiling() });
const interpretive = createSchemaValidators();

function diagnose(validators: SchemaValidators, schema: unknown, answer: unknown): Validation {
  return validateParsedAnswer(validators.validatorFor(schema), answer);
}

function refusalOf(validators: SchemaValidators, schema: unknown): string {
  try {
    validators.validatorFor(schema);
  } catch (error) {
    if (GatewayError.isInstance(error)) return `${error.status} ${error.code} ${error.message}`;
    throw error;
  }
  return "compiled";
}

const draft07 = "http://json-schema.org/draft-07/schema#";
const draft2019 = "https://json-schema.org/draft/2019-09/schema";

interface Feature {
  name: string;
  schema: unknown;
  /** Answers to hold both validators to; each feature has valid and invalid ones. */
  answers: unknown[];
}

const tool = (name: string, input: Record<string, unknown>, required: string[]) => ({
  type: "object",
  additionalProperties: false,
  required: ["tool", "input"],
  properties: {
    tool: { const: name },
    input: { type: "object", additionalProperties: false, required, properties: input },
  },
});

const features: Feature[] = [
  {
    name: "draft-07: definitions, $ref, tuple items and additionalItems, dependencies",
    schema: {
      $schema: draft07,
      definitions: { id: { type: "string", pattern: "^F[0-9]+$" } },
      type: "object",
      properties: {
        id: { $ref: "#/definitions/id" },
        pair: { type: "array", items: [{ type: "string" }, { type: "integer" }], additionalItems: false },
        // Unknown to draft-07 (Ajv's draft-07 class ignores them), so not checked there either.
        later: { prefixItems: [{ type: "string" }], unevaluatedProperties: false, minContains: 3 },
      },
      dependencies: { pair: ["id"], id: { required: ["pair"] } },
    },
    answers: [
      { id: "F1", pair: ["a", 1] },
      { id: "X1", pair: ["a", 1, 2] },
      { pair: ["a", "b"] },
      { id: "F2" },
      { later: [1], id: "F3", pair: ["a", 2] },
    ],
  },
  {
    name: "2019-09: $recursiveRef, unevaluatedProperties and dependentRequired",
    schema: {
      $schema: draft2019,
      $recursiveAnchor: true,
      type: "object",
      required: ["name"],
      properties: { name: { type: "string" }, children: { type: "array", items: { $recursiveRef: "#" } } },
      dependentRequired: { children: ["name"] },
      unevaluatedProperties: false,
    },
    answers: [
      { name: "a", children: [{ name: "b" }] },
      { name: "a", children: [{ nom: "b" }] },
      { name: "a", extra: 1 },
      { name: 5, children: [{ name: "b", children: [{}] }] },
    ],
  },
  {
    name: "2020-12: $defs, local anchors, prefixItems, items: false and unevaluated*",
    schema: {
      $defs: {
        level: { $anchor: "level", enum: ["low", "high"] },
        point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false },
      },
      type: "object",
      allOf: [{ properties: { level: { $ref: "#level" } } }],
      properties: {
        at: { $ref: "#/$defs/point" },
        tags: { type: "array", prefixItems: [{ type: "string" }], unevaluatedItems: false },
      },
      unevaluatedProperties: false,
    },
    answers: [
      { level: "low", at: [1, 2], tags: ["x"] },
      { level: "mid", at: [1, 2, 3], tags: ["x", "y"] },
      { level: "low", color: "red" },
      { at: ["a"], tags: [1] },
    ],
  },
  {
    name: "2020-12: unevaluatedProperties beside dependentSchemas (ajv#2483, rewritten in the prepare step)",
    schema: {
      type: "object",
      properties: { kind: { enum: ["service", "job"] }, schedule: { type: "string" } },
      dependentSchemas: { schedule: { properties: { timezone: { type: "string" } }, required: ["timezone"] } },
      unevaluatedProperties: false,
    },
    answers: [
      { kind: "job" },
      { kind: "job", schedule: "0 * * * *", timezone: "UTC" },
      { kind: "job", schedule: "0 * * * *" },
      { kind: "job", timezone: "UTC" },
      { kind: "cron", schedule: 5, timezone: "UTC", other: 1 },
    ],
  },
  {
    name: "formats of ajv-formats, strings and numbers",
    schema: {
      type: "object",
      properties: {
        at: { type: "string", format: "date-time" },
        day: { type: "string", format: "date" },
        contact: { type: "string", format: "email" },
        site: { type: "string", format: "uri" },
        id: { type: "string", format: "uuid" },
        count: { type: "integer", format: "int32" },
        total: { type: "number", format: "int64" },
        ratio: { type: "number", format: "double" },
        custom: { type: "string", format: "x-internal-code" },
      },
    },
    answers: [
      {
        at: "2026-01-02T03:04:05Z",
        day: "2024-02-29",
        contact: "a@example.com",
        site: "https://example.com/a",
        id: "123e4567-e89b-12d3-a456-426614174000",
        count: 7,
        total: 9007199254740991,
        ratio: 0.5,
        custom: "anything",
      },
      { at: "2026-01-02T03:04:05", day: "2023-02-29", contact: "a@b", site: "example.com", id: "123" },
      { count: 2 ** 31, total: 1.5 },
      { count: -(2 ** 31), at: "2026-01-02 03:04:05+01:00" },
    ],
  },
  {
    name: "a discriminated oneOf of tool calls",
    schema: {
      type: "object",
      required: ["call"],
      properties: {
        call: {
          oneOf: [
            tool("get_weather", { location: { type: "string" }, unit: { enum: ["c", "f"] } }, ["location"]),
            tool("search_web", { query: { type: "string" }, top_k: { type: "integer", minimum: 1 } }, ["query"]),
          ],
        },
      },
    },
    answers: [
      { call: { tool: "search_web", input: { query: "x", top_k: 3 } } },
      { call: { tool: "search_web", input: { query: 5, top_k: 0, extra: 1 } } },
      { call: { tool: "get_weather", input: { unit: "k" } } },
      { call: { tool: "send_email", input: {} } },
      { call: { tool: 7, input: {} } },
      { call: { input: {} } },
      { call: "search_web" },
    ],
  },
  {
    name: "a declared discriminator Ajv cannot use (a mapping), validated as a plain oneOf",
    schema: {
      type: "object",
      discriminator: { propertyName: "kind", mapping: { a: "#/$defs/a" } },
      oneOf: [{ $ref: "#/$defs/a" }, { $ref: "#/$defs/b" }],
      $defs: {
        a: { type: "object", required: ["kind"], properties: { kind: { const: "a" }, n: { type: "integer" } } },
        b: { type: "object", required: ["kind"], properties: { kind: { const: "b" } } },
      },
    },
    answers: [{ kind: "a", n: 1 }, { kind: "a", n: "x" }, { kind: "c" }, {}],
  },
  {
    name: "nullable (OpenAPI), not, if/then/else, anyOf, uniqueItems, contains and multipleOf",
    schema: {
      type: "object",
      properties: {
        note: { type: "string", nullable: true, maxLength: 3 },
        code: { not: { const: "none" } },
        kind: { enum: ["a", "b"] },
        tags: { type: "array", items: { type: "string" }, uniqueItems: true, contains: { const: "main" } },
        price: { type: "number", multipleOf: 0.01 },
        value: { anyOf: [{ type: "string" }, { type: "integer", minimum: 0 }] },
      },
      if: { properties: { kind: { const: "a" } }, required: ["kind"] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords.
      then: { required: ["code"] },
      else: { required: ["price"] },
    },
    answers: [
      { note: null, kind: "a", code: "x", tags: ["main", "b"], price: 19.99, value: "v" },
      { note: "long", kind: "a", tags: ["b", "b", {}], value: -1 },
      { kind: "b", code: "none", price: 19.995, tags: [] },
      { price: 0.30000000000000004, tags: ["x"], value: true },
    ],
  },
];

describe("the interpretive validator validates as Ajv does", () => {
  for (const feature of features) {
    it(`gives Ajv's diagnostics for every answer to ${feature.name}`, () => {
      const outcomes = feature.answers.map((answer) => diagnose(interpretive, feature.schema, answer));
      expect(outcomes).toEqual(feature.answers.map((answer) => diagnose(ajv, feature.schema, answer)));
      expect(outcomes.some(({ valid }) => valid) && outcomes.some(({ valid }) => !valid)).toBe(true);
    });
  }
});

describe("the interpretive validator refuses what Ajv refuses", () => {
  const refused: Array<[string, unknown]> = [
    ["a type that is none", { type: "text" }],
    ["a required list with a repeated name", { type: "object", required: ["a", "a"] }],
    ["an empty enum", { enum: [] }],
    ["nullable without a type", { properties: { a: { nullable: true } } }],
    ["a pattern that is no regular expression with the u flag", { pattern: "^[\\w-\\.]+$" }],
    ["a patternProperties name that is none", { patternProperties: { "(": {} } }],
    ["the draft-04 keyword id", { id: "x", type: "string" }],
    [
      "draft-04's boolean exclusiveMinimum",
      { $schema: "http://json-schema.org/draft-04/schema#", exclusiveMinimum: true },
    ],
    ["2020-12 items as an array", { items: [{ type: "string" }] }],
    ["a $ref to a place that does not exist", { properties: { a: { $ref: "#/$defs/nope" } } }],
    ["an external $ref", { properties: { a: { $ref: "https://schemas.example.com/secret.json" } } }],
    ["a $ref to an unknown anchor", { properties: { a: { $ref: "#nowhere" } } }],
    ["an $id with a fragment", { properties: { a: { $id: "#frag", type: "string" } } }],
    ["a loop of references", { allOf: [{ $ref: "#" }] }],
    ["a value that is no schema", 42],
  ];

  it.each(refused)("refuses %s with Ajv's 400", (_name, schema) => {
    const refusal = refusalOf(ajv, schema);
    expect(refusal).toMatch(/^400 INVALID_REQUEST /);
    expect(refusalOf(interpretive, schema)).toBe(refusal);
  });

  it.each([
    ["a broken reference in a definition nothing uses", { $defs: { x: { $ref: "#/nope" } }, type: "string" }],
    [
      "vendor keywords, unknown formats and propertyOrdering",
      { "x-a": { $ref: "#/x" }, format: "x-code", propertyOrdering: ["a"] },
    ],
    [
      "ajv-formats' formatMinimum, a vendor keyword now",
      { type: "string", format: "date", formatMinimum: "2020-01-01" },
    ],
  ])("compiles %s, as Ajv does", (_name, schema) => {
    expect(refusalOf(ajv, schema)).toBe("compiled");
    expect(refusalOf(interpretive, schema)).toBe("compiled");
  });
});

describe("the interpretive validator where it knowingly differs from Ajv", () => {
  // Ajv's multipleOf (with multipleOfPrecision 9) divides in binary floating point and takes a quotient within 1e-9 of
  // an integer; past ~1e7 the quotient's own rounding error exceeds that, and Ajv refuses true multiples. The
  // interpretive validator divides exactly in decimal and takes them. (Where Ajv's tolerance takes what the exact
  // check refuses, e.g. 0.30000000000000004 against 0.1, Ajv's answer is kept: see the features above.)
  it("differs: takes 10000000.21 as the multiple of 0.01 it is, which Ajv refuses", () => {
    const schema = { type: "number", multipleOf: 0.01 };
    expect(diagnose(interpretive, schema, 10_000_000.21)).toEqual({ valid: true, errors: [] });
    expect(diagnose(ajv, schema, 10_000_000.21)).toMatchObject({
      valid: false,
      errors: [{ validation_keyword: "multipleOf" }],
    });
  });

  // The interpretive validator recurses with larger stack frames than Ajv's generated code: against a recursive
  // schema it reaches the end of the stack after ~270 levels of nesting (Node 20 and workerd alike), where Ajv goes
  // past the 512 levels an answer may have. Deeper answers get the keyword `nesting`, as an answer too deep for
  // Ajv does: an outcome, not a 500.
  it("differs: reports an answer nested 400 levels deep against a recursive schema as too deep, which Ajv validates", () => {
    const schema = { type: "object", properties: { next: { $ref: "#" } }, additionalProperties: false };
    const chain = (levels: number) => {
      let answer: Record<string, unknown> = {};
      for (let level = 1; level < levels; level++) answer = { next: answer };
      return answer;
    };
    expect(diagnose(interpretive, schema, chain(100))).toEqual({ valid: true, errors: [] });
    expect(diagnose(ajv, schema, chain(400))).toEqual({ valid: true, errors: [] });
    expect(diagnose(interpretive, schema, chain(400))).toMatchObject({
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "nesting" }],
    });
  });

  // `$dynamicRef` is read as `$ref` (the interpretive validator knows no dynamic scope). Within one schema resource the
  // two resolve alike; across nested `$id` resources a dynamic reference may resolve to an outer anchor where the
  // static one stays inside. No test here: every such schema the gateway was shown is refused first, as its
  // reference loop never moves into the answer (see ref-cycles), and the README lists it among the known differences.
  it("resolves $dynamicRef within one schema resource as Ajv does", () => {
    const schema = {
      $dynamicAnchor: "node",
      type: "object",
      properties: { n: { type: "integer" }, children: { type: "array", items: { $dynamicRef: "#node" } } },
    };
    for (const answer of [
      { n: 1, children: [{ n: 2 }] },
      { n: 1, children: [{ n: "x" }] },
    ]) {
      expect(diagnose(interpretive, schema, answer)).toEqual(diagnose(ajv, schema, answer));
    }
  });
});
