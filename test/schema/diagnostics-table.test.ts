import { describe, expect, it } from "vitest";
import { ajvSchemaCompiling } from "../../src/schema/compile-schema.js";
import { type Validation, type ValidationError, validateParsedAnswer } from "../../src/schema/diagnostics.js";
import { createSchemaValidators } from "../../src/schema/schema-validators.js";

/**
 * Table-driven diagnostics (contract section 6): one row per keyword, with the schema, an
 * answer that breaks it, and the sanitized error expected. Every answer carries a canary in its
 * values and in a property name the schema does not know; no diagnostic may ever repeat it.
 *
 * Every row runs against both validators, on Node and inside workerd (the file is shared): Ajv compiling, as Node
 * validates, and the interpretive validator, as Workers validate client schemas. Their diagnostics must be equal,
 * member for member, hint and example included.
 */

const validators = {
  Ajv: createSchemaValidators({ compiling: ajvSchemaCompiling() }),
  "the interpretive validator": createSchemaValidators(),
};
type ValidatorName = keyof typeof validators;
const validatorNames = Object.keys(validators) as ValidatorName[];

/** An answer's diagnostics from one validator. */
function diagnose(validator: ValidatorName, schema: unknown, answer: unknown): Validation {
  return validateParsedAnswer(validators[validator].validatorFor(schema), JSON.parse(JSON.stringify(answer)));
}

const canary = "CANARY-q7Zx";
/** A property name no schema below declares. */
const canaryName = `${canary}-name`;

type Schema = Record<string, unknown>;

/** The members of an error that say where and what, without the English hint. */
type Located = Pick<
  ValidationError,
  "validation_path" | "validation_keyword" | "validation_fields" | "expected_types" | "actual_type"
> & {
  /** Whether the error carries an example object (only where an object was expected). */
  example: boolean;
};

interface Row {
  keyword: string;
  schema: Schema;
  answer: Record<string, unknown>;
  expected: Located[];
  /** The errors' hints, in order (left out only where a BUG below makes the hint wrong). */
  hints?: string[];
  /** Schema words that belong to alternatives the answer did not select, so must not be mentioned. */
  notMentioned?: string[];
}

const object = (properties: Schema, extra: Schema = {}): Schema => ({ type: "object", properties, ...extra });

/** Tool alternatives told apart by `name`, the way agents declare their next call. */
const toolCall = object(
  {
    call: {
      oneOf: [
        object(
          {
            name: { const: "get_weather" },
            input: object(
              { location: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] } },
              {
                required: ["location"],
                additionalProperties: false,
              },
            ),
          },
          { required: ["name", "input"], additionalProperties: false },
        ),
        object(
          {
            name: { const: "search_web" },
            input: object(
              { query: { type: "string" }, top_k: { type: "integer", minimum: 1 } },
              {
                required: ["query"],
                additionalProperties: false,
              },
            ),
          },
          { required: ["name", "input"], additionalProperties: false },
        ),
      ],
    },
  },
  { required: ["call"] },
);

const rows: Row[] = [
  {
    keyword: "type (a string where an integer belongs)",
    hints: ["count must be an integer."],
    schema: object({ count: { type: "integer" } }),
    answer: { count: canary },
    expected: [
      {
        validation_path: "/count",
        validation_keyword: "type",
        expected_types: ["integer"],
        actual_type: "string",
        example: false,
      },
    ],
  },
  {
    keyword: "type (a boolean is never an integer)",
    hints: ["count must be an integer."],
    schema: object({ count: { type: "integer" }, note: { type: "string" } }),
    answer: { count: true, note: canary },
    expected: [
      {
        validation_path: "/count",
        validation_keyword: "type",
        expected_types: ["integer"],
        actual_type: "boolean",
        example: false,
      },
    ],
  },
  {
    keyword: "type (3.5 is a number, not an integer)",
    hints: ["page must be an integer."],
    schema: object({ page: { type: "integer" }, note: { type: "string" } }),
    answer: { page: 3.5, note: canary },
    expected: [
      {
        validation_path: "/page",
        validation_keyword: "type",
        expected_types: ["integer"],
        actual_type: "number",
        example: false,
      },
    ],
  },
  {
    keyword: "type (a string where an object belongs)",
    hints: ["finding must be an object with id."],
    schema: object({ finding: object({ id: { type: "string" }, text: { type: "string" } }, { required: ["id"] }) }),
    answer: { finding: `${canary} as a sentence` },
    expected: [
      {
        validation_path: "/finding",
        validation_keyword: "type",
        validation_fields: ["id", "text"],
        expected_types: ["object"],
        actual_type: "string",
        example: true,
      },
    ],
  },
  {
    keyword: "required",
    hints: ["The answer is missing the required properties name, age."],
    schema: object(
      { id: { type: "string" }, name: { type: "string" }, age: { type: "integer" } },
      {
        required: ["id", "name", "age"],
      },
    ),
    answer: { id: canary },
    expected: [
      {
        validation_path: "",
        validation_keyword: "required",
        validation_fields: ["age", "id", "name"],
        example: true,
      },
    ],
  },
  {
    keyword: "additionalProperties",
    hints: ["The answer has a property the schema does not allow; allowed: a, b."],
    schema: object({ a: { type: "string" }, b: { type: "string" } }, { additionalProperties: false }),
    answer: { a: canary, [canaryName]: canary },
    expected: [
      {
        validation_path: "/*",
        validation_keyword: "additionalProperties",
        validation_fields: ["a", "b"],
        example: false,
      },
    ],
  },
  {
    keyword: "enum",
    hints: ["level must be one of: low, medium, high."],
    schema: object({ level: { type: "string", enum: ["low", "medium", "high"] } }),
    answer: { level: canary },
    expected: [{ validation_path: "/level", validation_keyword: "enum", example: false }],
  },
  {
    keyword: "const",
    hints: ['kind must be "recall".'],
    schema: object({ kind: { const: "recall" } }),
    answer: { kind: canary },
    expected: [{ validation_path: "/kind", validation_keyword: "const", example: false }],
  },
  {
    keyword: "pattern",
    hints: ["id must match the pattern ^E[0-9]{6}$."],
    schema: object({ id: { type: "string", pattern: "^E[0-9]{6}$" } }),
    answer: { id: `E${canary}` },
    expected: [{ validation_path: "/id", validation_keyword: "pattern", example: false }],
  },
  {
    keyword: "minLength",
    hints: ["code must be at least 40 characters long."],
    schema: object({ code: { type: "string", minLength: 40 } }),
    answer: { code: canary },
    expected: [{ validation_path: "/code", validation_keyword: "minLength", example: false }],
  },
  {
    keyword: "maxLength",
    hints: ["code must be at most 4 characters long."],
    schema: object({ code: { type: "string", maxLength: 4 } }),
    answer: { code: canary },
    expected: [{ validation_path: "/code", validation_keyword: "maxLength", example: false }],
  },
  {
    keyword: "minimum",
    hints: ["page must be at least 1."],
    schema: object({ page: { type: "integer", minimum: 1 }, note: { type: "string" } }),
    answer: { page: 0, note: canary },
    expected: [{ validation_path: "/page", validation_keyword: "minimum", example: false }],
  },
  {
    keyword: "maximum",
    hints: ["limit must be at most 500."],
    schema: object({ limit: { type: "integer", maximum: 500 }, note: { type: "string" } }),
    answer: { limit: 501, note: canary },
    expected: [{ validation_path: "/limit", validation_keyword: "maximum", example: false }],
  },
  {
    keyword: "exclusiveMinimum",
    hints: ["price must be greater than 0."],
    schema: object({ price: { type: "number", exclusiveMinimum: 0 }, note: { type: "string" } }),
    answer: { price: 0, note: canary },
    expected: [{ validation_path: "/price", validation_keyword: "exclusiveMinimum", example: false }],
  },
  {
    keyword: "multipleOf",
    schema: object({ quantity: { type: "integer", multipleOf: 5 }, note: { type: "string" } }),
    answer: { quantity: 7, note: canary },
    expected: [{ validation_path: "/quantity", validation_keyword: "multipleOf", example: false }],
  },
  {
    keyword: "minItems",
    hints: ["refs must have at least 2 items."],
    schema: object({ refs: { type: "array", minItems: 2, items: { type: "string" } } }),
    answer: { refs: [canary] },
    expected: [{ validation_path: "/refs", validation_keyword: "minItems", example: false }],
  },
  {
    keyword: "maxItems",
    hints: ["refs must have at most 1 item."],
    schema: object({ refs: { type: "array", maxItems: 1, items: { type: "string" } } }),
    answer: { refs: [canary, `${canary}-2`] },
    expected: [{ validation_path: "/refs", validation_keyword: "maxItems", example: false }],
  },
  {
    keyword: "uniqueItems",
    hints: ["refs must not contain duplicate items."],
    schema: object({ refs: { type: "array", uniqueItems: true, items: { type: "string" } } }),
    answer: { refs: ["E000001", canary, canary] },
    expected: [{ validation_path: "/refs", validation_keyword: "uniqueItems", example: false }],
  },
  {
    keyword: "format",
    hints: ["contact must be a valid email."],
    schema: object({ contact: { type: "string", format: "email" }, at: { type: "string", format: "date-time" } }),
    answer: { contact: canary, at: "2024-01-01T00:00:00Z" },
    expected: [{ validation_path: "/contact", validation_keyword: "format", example: false }],
  },
  {
    keyword: "oneOf with a discriminator (errors of the named alternative only)",
    hints: [
      "call/input has a property the schema does not allow; allowed: query, top_k.",
      "input/query must be a string.",
      "input/top_k must be at least 1.",
    ],
    schema: toolCall,
    answer: { call: { name: "search_web", input: { query: 5, top_k: 0, note: canary } } },
    expected: [
      {
        validation_path: "/call/input/*",
        validation_keyword: "additionalProperties",
        validation_fields: ["query", "top_k"],
        example: false,
      },
      {
        validation_path: "/call/input/query",
        validation_keyword: "type",
        expected_types: ["string"],
        actual_type: "integer",
        example: false,
      },
      { validation_path: "/call/input/top_k", validation_keyword: "minimum", example: false },
    ],
    notMentioned: ["location", "unit", "get_weather", "celsius"],
  },
  {
    keyword: "oneOf with a discriminator (a tag that names no alternative)",
    hints: ["call/name must be one of: get_weather, search_web."],
    schema: toolCall,
    answer: { call: { name: canary, input: { query: canary } } },
    expected: [{ validation_path: "/call/name", validation_keyword: "enum", example: false }],
    notMentioned: ["location", "query"],
  },
  {
    keyword: "oneOf without a discriminator (no alternative of the answer's type)",
    hints: ["value must be a string or an integer."],
    schema: object({
      value: {
        oneOf: [
          { type: "string", maxLength: 3 },
          { type: "integer", minimum: 0 },
        ],
      },
    }),
    answer: { value: false, note: canary },
    expected: [
      {
        validation_path: "/value",
        validation_keyword: "type",
        expected_types: ["string", "integer"],
        actual_type: "boolean",
        example: false,
      },
    ],
  },
  {
    keyword: "oneOf without a discriminator (the closest alternative, of the answer's type)",
    hints: ["value must be at most 3 characters long."],
    schema: object({
      value: {
        oneOf: [
          { type: "string", maxLength: 3 },
          { type: "integer", minimum: 0 },
        ],
      },
    }),
    answer: { value: canary },
    expected: [{ validation_path: "/value", validation_keyword: "maxLength", example: false }],
    notMentioned: ["minimum", "at least 0"],
  },
  {
    keyword: "nested arrays (/a/0/b/1/c)",
    hints: ["b/1/c must be an integer."],
    schema: object({
      a: { type: "array", items: object({ b: { type: "array", items: object({ c: { type: "integer" } }) } }) },
    }),
    answer: { a: [{ b: [{ c: 1 }, { c: canary }] }] },
    expected: [
      {
        validation_path: "/a/0/b/1/c",
        validation_keyword: "type",
        expected_types: ["integer"],
        actual_type: "string",
        example: false,
      },
    ],
  },
  {
    keyword: "masking of unknown names along the path (a map's keys)",
    hints: ["*/count must be an integer."],
    schema: object({
      metrics: { type: "object", additionalProperties: object({ count: { type: "integer" } }) },
    }),
    answer: { metrics: { [canaryName]: { count: canary } } },
    expected: [
      {
        validation_path: "/metrics/*/count",
        validation_keyword: "type",
        expected_types: ["integer"],
        actual_type: "string",
        example: false,
      },
    ],
  },
  {
    keyword: "masking of an unknown name deep in closed objects",
    hints: ["update/brief has a property the schema does not allow; allowed: text."],
    schema: object(
      { update: object({ brief: object({ text: { type: "string" } }, { additionalProperties: false }) }) },
      { additionalProperties: false },
    ),
    answer: { update: { brief: { text: canary, [canaryName]: canary } } },
    expected: [
      {
        validation_path: "/update/brief/*",
        validation_keyword: "additionalProperties",
        validation_fields: ["text"],
        example: false,
      },
    ],
  },
];

/**
 * The row's answer as sent: where the root accepts unknown properties, one more named by the
 * canary (holding the canary), so every row also exercises an unknown name.
 */
function answerOf(row: Row): Record<string, unknown> {
  return row.schema.additionalProperties === false ? row.answer : { ...row.answer, [canaryName]: canary };
}

function located(error: ValidationError): Located {
  const { validation_path, validation_keyword, validation_fields, expected_types, actual_type } = error;
  return {
    validation_path,
    validation_keyword,
    ...(validation_fields !== undefined && { validation_fields }),
    ...(expected_types !== undefined && { expected_types }),
    ...(actual_type !== undefined && { actual_type }),
    example: error.example !== undefined,
  };
}

/** Every property name and every string value in a JSON document. */
function namesAndStrings(value: unknown): { names: string[]; strings: string[] } {
  const names: string[] = [];
  const strings: string[] = [];
  const visit = (node: unknown): void => {
    if (typeof node === "string") strings.push(node);
    else if (Array.isArray(node)) node.forEach(visit);
    else if (typeof node === "object" && node !== null) {
      for (const [name, child] of Object.entries(node)) {
        names.push(name);
        visit(child);
      }
    }
  };
  visit(value);
  return { names, strings };
}

describe.each(validatorNames)("diagnostics, one row per keyword, from %s", (validator) => {
  it.each(rows)("$keyword", (row) => {
    const result = diagnose(validator, row.schema, answerOf(row));
    expect(result.valid).toBe(false);
    expect(result.errors.map(located)).toEqual(row.expected);
    if (row.hints !== undefined) expect(result.errors.map((error) => error.hint)).toEqual(row.hints);
    for (const error of result.errors) {
      expect(error.hint, "a short English sentence").toMatch(/^\S[^\n]{0,200}\.$/);
      for (const type of [...(error.expected_types ?? []), ...(error.actual_type ? [error.actual_type] : [])]) {
        expect(["string", "number", "integer", "boolean", "object", "array", "null"]).toContain(type);
      }
    }
    const text = JSON.stringify(result);
    for (const word of row.notMentioned ?? []) expect(text).not.toContain(word);
  });
});

describe("the canary in answer values and unknown property names", () => {
  it.each(rows)("is placed in both by the row $keyword", (row) => {
    const { names, strings } = namesAndStrings(answerOf(row));
    expect(names.some((name) => name.includes(canary))).toBe(true);
    expect(strings.some((value) => value.includes(canary))).toBe(true);
    expect(JSON.stringify(row.schema)).not.toContain(canary);
  });

  for (const validator of validatorNames) {
    it.each(rows)(`never appears in the diagnostics of the row $keyword, from ${validator}`, (row) => {
      const text = JSON.stringify(diagnose(validator, row.schema, answerOf(row)));
      expect(text).not.toContain(canary);
      expect(text).not.toContain("q7Zx");
    });
  }
});

describe("the two validators", () => {
  it.each(rows)("give identical diagnostics for the row $keyword", (row) => {
    expect(diagnose("the interpretive validator", row.schema, answerOf(row))).toEqual(
      diagnose("Ajv", row.schema, answerOf(row)),
    );
  });
});

describe("the hint of multipleOf", () => {
  // Was a bug, now fixed: Ajv reports multipleOf with `params: {multipleOf: 5}`, not `params.limit`, so issueOf in
  // src/schema/diagnose-unions.ts drops the limit and the hint falls back to "quantity does not meet
  // the schema's multipleOf rule." although diagnose-hint.ts has the phrase "must be a multiple of N".
  // Suggested fix: in issueOf, read `params.multipleOf` for keyword "multipleOf" (as `limit`).
  it.each(validatorNames)("names the multiple of multipleOf, from %s", (validator) => {
    const result = diagnose(validator, rowNamed("multipleOf").schema, answerOf(rowNamed("multipleOf")));
    expect(result.errors[0]?.hint).toBe("quantity must be a multiple of 5.");
  });
});

function rowNamed(keyword: string): Row {
  const row = rows.find((candidate) => candidate.keyword === keyword);
  if (row === undefined) throw new Error(`no row ${keyword}`);
  return row;
}
