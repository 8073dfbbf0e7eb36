import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type Validation, validateAnswer } from "../../src/schema/diagnostics.js";
import { schemaRefusal } from "../../src/schema/schema-refusal.js";
import { validatorOf } from "../support/schema-validators.js";

const secret = "SECRET-7f3a";

/** A small schema shaped like investigation_bootstrap_v22: nested findings and a tagged `next`. */
const bootstrapLike = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    evidence_id: { type: "string", pattern: "^E[0-9]{6}$", examples: ["E000001"] },
    finding: {
      type: "object",
      additionalProperties: false,
      required: ["id", "direction", "text", "scope", "evidence_refs"],
      properties: {
        id: { type: "string", pattern: "^F[0-9]+$", examples: ["F1"] },
        direction: { type: "string", enum: ["supports", "contradicts", "neutral"] },
        text: { type: "string", maxLength: 600 },
        scope: { type: "string", maxLength: 200 },
        evidence_refs: { type: "array", maxItems: 2, items: { $ref: "#/$defs/evidence_id" } },
      },
    },
  },
  type: "object",
  additionalProperties: false,
  required: ["update", "next"],
  properties: {
    update: {
      type: "object",
      additionalProperties: false,
      required: ["working_brief"],
      properties: {
        working_brief: {
          type: "object",
          additionalProperties: false,
          required: ["findings"],
          properties: { findings: { type: "array", items: { $ref: "#/$defs/finding" } } },
        },
      },
    },
    next: {
      type: "object",
      oneOf: [
        {
          type: "object",
          additionalProperties: false,
          required: ["action", "arguments"],
          properties: {
            action: { const: "tool/project.query" },
            arguments: {
              type: "object",
              required: ["kind", "query"],
              properties: { kind: { enum: ["sql", "logs"] }, query: { type: "string" } },
            },
          },
        },
        {
          type: "object",
          additionalProperties: false,
          required: ["action", "arguments"],
          properties: {
            action: { const: "recall" },
            arguments: {
              type: "object",
              additionalProperties: false,
              required: ["evidence_refs", "page"],
              properties: {
                evidence_refs: { type: "array", items: { $ref: "#/$defs/evidence_id" } },
                page: { type: "integer", minimum: 0 },
              },
            },
          },
        },
        {
          type: "object",
          additionalProperties: false,
          required: ["action", "arguments"],
          properties: {
            action: { const: "finish" },
            arguments: { type: "object", required: ["diagnosis"], properties: { diagnosis: { type: "string" } } },
          },
        },
      ],
    },
  },
};

const finding = { id: "F1", direction: "supports", text: "t", scope: "s", evidence_refs: ["E000001"] };

function bootstrapAnswer(findings: unknown[], next: unknown = { action: "finish", arguments: { diagnosis: "d" } }) {
  return JSON.stringify({ update: { working_brief: { findings } }, next });
}

const v22Url = new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url);
const v22: unknown = existsSync(v22Url) ? JSON.parse(readFileSync(v22Url, "utf8")) : undefined;

function v22Answer(patch: Record<string, unknown>): string {
  return JSON.stringify({
    assessment: { summary: "s", confidence: "low", hypothesis_status: "open" },
    update: {
      working_brief: { findings: [finding] },
      retired: [],
      next_step: { intent: "i", expected_signal: "e" },
    },
    next: { action: "recall", arguments: { kind: "recall", evidence_refs: ["E000002"], page: 0 }, rationale: "r" },
    ...patch,
  });
}

function paths(validation: Validation): string[] {
  return validation.errors.map((error) => error.validation_path);
}

describe("validateAnswer", () => {
  it("reports a string where a finding object is expected exactly in the contract's form", () => {
    const result = validateAnswer(validatorOf(bootstrapLike), bootstrapAnswer([`${secret} as a sentence`]));
    expect(result).toEqual({
      valid: false,
      errors: [
        {
          validation_path: "/update/working_brief/findings/0",
          validation_keyword: "type",
          validation_fields: ["direction", "evidence_refs", "id", "scope", "text"],
          expected_types: ["object"],
          actual_type: "string",
          hint: "findings/0 must be an object with id, direction, text, scope, evidence_refs.",
          example: { id: "F1", direction: "supports", text: "…", scope: "…", evidence_refs: ["E000001"] },
        },
      ],
    });
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("gives valid answers no errors", () => {
    expect(validateAnswer(validatorOf(bootstrapLike), bootstrapAnswer([finding]))).toEqual({ valid: true, errors: [] });
  });

  it("reports unparseable output with the keyword json and nothing of the text", () => {
    const result = validateAnswer(validatorOf(bootstrapLike), `{"update": ${secret}`);
    expect(result).toEqual({
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "json", hint: "The answer is not valid JSON." }],
    });
  });

  it("masks an unknown property name as * and never repeats it", () => {
    const answer = JSON.parse(bootstrapAnswer([finding]));
    answer.update.working_brief[secret] = "value";
    const result = validateAnswer(validatorOf(bootstrapLike), JSON.stringify(answer));
    expect(result.errors).toEqual([
      {
        validation_path: "/update/working_brief/*",
        validation_keyword: "additionalProperties",
        validation_fields: ["findings"],
        hint: "update/working_brief has a property the schema does not allow; allowed: findings.",
      },
    ]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("masks property names that only a map's additionalProperties schema covers", () => {
    const schema = {
      type: "object",
      additionalProperties: { type: "object", properties: { count: { type: "integer" } } },
    };
    const result = validateAnswer(validatorOf(schema), JSON.stringify({ [secret]: { count: "many" } }));
    expect(paths(result)).toEqual(["/*/count"]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("reports a boolean where an integer is expected as boolean, never as integer", () => {
    const result = validateAnswer(
      validatorOf({ type: "object", properties: { page: { type: "integer" } } }),
      '{"page": true}',
    );
    expect(result.errors[0]).toMatchObject({ expected_types: ["integer"], actual_type: "boolean" });
  });

  it("reports 3.5 where an integer is expected as number", () => {
    const result = validateAnswer(
      validatorOf({ type: "object", properties: { page: { type: "integer" } } }),
      '{"page": 3.5}',
    );
    expect(result.errors[0]).toMatchObject({
      validation_path: "/page",
      validation_keyword: "type",
      expected_types: ["integer"],
      actual_type: "number",
      hint: "page must be an integer.",
    });
  });

  it("reports 3 where a string is expected as integer", () => {
    const result = validateAnswer(
      validatorOf({ type: "object", properties: { name: { type: "string" } } }),
      '{"name": 3}',
    );
    expect(result.errors[0]).toMatchObject({ expected_types: ["string"], actual_type: "integer" });
  });

  it("reports only the errors of the alternative the discriminator names", () => {
    const next = { action: "recall", arguments: { evidence_refs: "E000001", page: -1, query: secret } };
    const result = validateAnswer(validatorOf(bootstrapLike), bootstrapAnswer([finding], next));
    expect(result.errors.map((error) => [error.validation_path, error.validation_keyword])).toEqual([
      ["/next/arguments/*", "additionalProperties"],
      ["/next/arguments/evidence_refs", "type"],
      ["/next/arguments/page", "minimum"],
    ]);
    const text = JSON.stringify(result);
    expect(text).not.toContain("diagnosis");
    expect(text).not.toContain("tool/project.query");
    expect(text).not.toContain(secret);
  });

  it("finds the discriminator of an anyOf in a draft-07 schema without a discriminator keyword", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: {
        recall: {
          type: "object",
          required: ["action", "page"],
          properties: { action: { enum: ["recall"] }, page: { type: "integer" } },
        },
        finish: {
          type: "object",
          required: ["action", "summary"],
          properties: { action: { const: "finish" }, summary: { type: "string" } },
        },
      },
      anyOf: [{ $ref: "#/definitions/recall" }, { $ref: "#/definitions/finish" }],
    };
    const result = validateAnswer(validatorOf(schema), JSON.stringify({ action: "recall", page: "two" }));
    expect(result.errors.map((error) => [error.validation_path, error.validation_keyword])).toEqual([
      ["/page", "type"],
    ]);
  });

  it("reports a discriminator value that names no alternative as one enum error listing the allowed values", () => {
    const result = validateAnswer(
      validatorOf(bootstrapLike),
      bootstrapAnswer([finding], { action: secret, arguments: {} }),
    );
    expect(result.errors).toEqual([
      {
        validation_path: "/next/action",
        validation_keyword: "enum",
        hint: "next/action must be one of: tool/project.query, recall, finish.",
      },
    ]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("reports a missing discriminator as a required error on the union's object", () => {
    const result = validateAnswer(validatorOf(bootstrapLike), bootstrapAnswer([finding], { arguments: {} }));
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({
      validation_path: "/next",
      validation_keyword: "required",
      validation_fields: ["action", "arguments"],
      hint: "next is missing the required property action.",
    });
  });

  it("reports missing required properties of one object as one error with an example object", () => {
    const result = validateAnswer(
      validatorOf(bootstrapLike),
      bootstrapAnswer([{ id: "F1", direction: "neutral", text: "t" }]),
    );
    expect(result.errors).toEqual([
      {
        validation_path: "/update/working_brief/findings/0",
        validation_keyword: "required",
        validation_fields: ["direction", "evidence_refs", "id", "scope", "text"],
        hint: "findings/0 is missing the required properties scope, evidence_refs.",
        example: { id: "F1", direction: "supports", text: "…", scope: "…", evidence_refs: ["E000001"] },
      },
    ]);
  });

  it("echoes no value of an enum, pattern, maxItems, const, format or maxLength error", () => {
    const schema = {
      type: "object",
      properties: {
        level: { enum: ["low", "high"] },
        id: { type: "string", pattern: "^F[0-9]+$" },
        refs: { type: "array", maxItems: 1, items: { type: "string" } },
        kind: { const: "recall" },
        when: { type: "string", format: "date" },
        note: { type: "string", maxLength: 3 },
      },
    };
    const answer = { level: secret, id: secret, refs: [secret, secret], kind: secret, when: secret, note: secret };
    const result = validateAnswer(validatorOf(schema), JSON.stringify(answer));
    expect(result.errors.map((error) => error.validation_keyword)).toEqual([
      "pattern",
      "const",
      "enum",
      "maxLength",
      "maxItems",
      "format",
    ]);
    expect(result.errors.map((error) => error.hint)).toEqual([
      "id must match the pattern ^F[0-9]+$.",
      'kind must be "recall".',
      "level must be one of: low, high.",
      "note must be at most 3 characters long.",
      "refs must have at most 1 item.",
      "when must be a valid date.",
    ]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("replaces a plain union's noise by one type error naming every type it allows", () => {
    const schema = { type: "object", properties: { note: { anyOf: [{ type: "string" }, { type: "null" }] } } };
    const result = validateAnswer(validatorOf(schema), '{"note": 4}');
    expect(result.errors).toEqual([
      {
        validation_path: "/note",
        validation_keyword: "type",
        expected_types: ["string", "null"],
        actual_type: "integer",
        hint: "note must be a string or null.",
      },
    ]);
  });

  it("reports the closest alternative of a plain union, the one of the right type", () => {
    const schema = {
      oneOf: [
        { type: "string", maxLength: 2 },
        { type: "object", required: ["a"], properties: { a: { type: "string" } } },
      ],
    };
    const result = validateAnswer(validatorOf(schema), JSON.stringify(secret));
    expect(result.errors).toEqual([
      { validation_path: "", validation_keyword: "maxLength", hint: "The answer must be at most 2 characters long." },
    ]);
  });

  it("gives validation_fields only where the path is or should be an object", () => {
    const result = validateAnswer(validatorOf(bootstrapLike), bootstrapAnswer([{ ...finding, text: 5 }]));
    expect(result.errors).toEqual([
      {
        validation_path: "/update/working_brief/findings/0/text",
        validation_keyword: "type",
        expected_types: ["string"],
        actual_type: "integer",
        hint: "findings/0/text must be a string.",
      },
    ]);
  });

  it("validates a draft-07 schema with definitions and reports through its references", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { step: { type: "object", required: ["intent"], properties: { intent: { type: "string" } } } },
      type: "object",
      properties: { steps: { type: "array", items: { $ref: "#/definitions/step" } } },
    };
    const result = validateAnswer(validatorOf(schema), JSON.stringify({ steps: [{ intent: "a" }, {}] }));
    expect(result.errors).toEqual([
      {
        validation_path: "/steps/1",
        validation_keyword: "required",
        validation_fields: ["intent"],
        hint: "steps/1 is missing the required property intent.",
        example: { intent: "…" },
      },
    ]);
  });

  it("builds examples from const, enum, minimum, booleans, arrays and nested objects", () => {
    const schema = {
      $defs: {
        inner: { type: "object", required: ["flag"], properties: { flag: { type: "boolean" } } },
      },
      type: "object",
      properties: {
        item: {
          type: "object",
          required: ["kind", "level", "count", "ratio", "tags", "inner", "maybe"],
          properties: {
            kind: { const: "recall" },
            level: { type: "string", enum: ["low", "high"] },
            count: { type: "integer", minimum: 1 },
            ratio: { type: "number" },
            tags: { type: "array", items: { type: "string" } },
            inner: { $ref: "#/$defs/inner" },
            maybe: { type: ["string", "null"] },
          },
        },
      },
    };
    const result = validateAnswer(validatorOf(schema), JSON.stringify({ item: [secret] }));
    expect(result.errors[0]?.example).toEqual({
      kind: "recall",
      level: "low",
      count: 1,
      ratio: 0,
      tags: ["…"],
      inner: { flag: false },
      maybe: "…",
    });
  });

  it("orders errors by path with array indices in numeric order", () => {
    const schema = { type: "array", items: { type: "string" } };
    const answer = Array.from({ length: 12 }, (_, index) => (index % 2 === 0 ? index : "ok"));
    const result = validateAnswer(validatorOf(schema), JSON.stringify(answer));
    expect(paths(result)).toEqual(["/0", "/2", "/4", "/6", "/8", "/10"]);
  });

  it("caps the list at 20 errors", () => {
    const result = validateAnswer(
      validatorOf({ type: "array", items: { type: "string" } }),
      JSON.stringify(Array(30).fill(1)),
    );
    expect(result.errors).toHaveLength(20);
    expect(result.errors.at(-1)?.validation_path).toBe("/19");
  });

  it.runIf(v22 !== undefined)("reports the contract's example on investigation_bootstrap_v22", () => {
    const answer = JSON.parse(v22Answer({}));
    answer.update.working_brief.findings = [`${secret} compressed finding`];
    const result = validateAnswer(validatorOf(v22), JSON.stringify(answer));
    expect(result.errors).toEqual([
      {
        validation_path: "/update/working_brief/findings/0",
        validation_keyword: "type",
        validation_fields: ["direction", "evidence_refs", "id", "scope", "text"],
        expected_types: ["object"],
        actual_type: "string",
        hint: "findings/0 must be an object with id, direction, text, scope, evidence_refs.",
        example: { id: "F1", direction: "supports", text: "…", scope: "…", evidence_refs: ["E000001"] },
      },
    ]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it.runIf(v22 !== undefined)("reports only the recall alternative's errors on investigation_bootstrap_v22", () => {
    const next = {
      action: "recall",
      arguments: { kind: "recall", evidence_refs: [secret], page: 1.5 },
      rationale: "r",
    };
    const result = validateAnswer(validatorOf(v22), v22Answer({ next }));
    expect(result.errors.map((error) => [error.validation_path, error.validation_keyword])).toEqual([
      ["/next/arguments/evidence_refs/0", "pattern"],
      ["/next/arguments/page", "type"],
    ]);
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it.runIf(v22 !== undefined)("reports an unknown action on investigation_bootstrap_v22 at /next/action", () => {
    const result = validateAnswer(
      validatorOf(v22),
      v22Answer({ next: { action: secret, arguments: {}, rationale: "r" } }),
    );
    expect(result.errors).toEqual([
      {
        validation_path: "/next/action",
        validation_keyword: "enum",
        hint: "next/action must be one of: tool/project.query, recall, checkpoint, finish.",
      },
    ]);
  });

  it.runIf(v22 !== undefined)("accepts a valid investigation_bootstrap_v22 answer", () => {
    expect(validateAnswer(validatorOf(v22), v22Answer({}))).toEqual({ valid: true, errors: [] });
  });
});

describe("schemaRefusal", () => {
  const sent = { type: "object", properties: { "a/b": { type: "object", properties: { n: { minimum: 1 } } } } };

  it("reports a refusal that names nothing in the diagnostics form", () => {
    expect(schemaRefusal(undefined, sent)).toEqual({
      valid: false,
      errors: [
        {
          validation_path: "",
          validation_keyword: "provider_schema",
          hint: "The provider rejected the response schema.",
        },
      ],
    });
  });

  it("names the place as far as the schema sent holds it, and a refused keyword", () => {
    expect(
      schemaRefusal({ path: ["properties", "a/b", "properties", "n"], words: ["x", "minimum"] }, sent).errors,
    ).toEqual([
      {
        validation_path: "/properties/a~1b/properties/n",
        validation_keyword: "provider_schema",
        refused_keyword: "minimum",
        hint: "The provider rejected the response schema at /properties/a~1b/properties/n, naming its keyword 'minimum'.",
      },
    ]);
  });

  it("never repeats a provider's words the schema does not hold or that are no keyword", () => {
    const [error] = schemaRefusal(
      { path: ["properties", "secret text", "x"], words: ["secret text", "sk-123"] },
      sent,
    ).errors;
    expect(error).toEqual({
      validation_path: "/properties/*",
      validation_keyword: "provider_schema",
      hint: "The provider rejected the response schema at /properties/*.",
    });
  });
});
