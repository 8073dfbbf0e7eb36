import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { loadPolicies } from "../../src/policy/load-policies.js";
import { defaultMaxSchemaChars, maxSchemaCharsOf, type PolicyVersion } from "../../src/policy/policy.js";
import { checkAnswer } from "../../src/schema/check-answer.js";
import { compileResponseSchema, createAjv } from "../../src/schema/compile-schema.js";
import type { CompiledValidator } from "../../src/schema/compiled-validator.js";
import { validateAnswer, validateParsedAnswer } from "../../src/schema/diagnostics.js";
import { admitResponseSchema } from "../../src/schema/schema-admission.js";
import { testSchemaValidators, validatorOf } from "../support/schema-validators.js";

const policySchema = JSON.parse(readFileSync(new URL("../../schemas/policy.schema.json", import.meta.url), "utf8"));

async function policyWith(validation: string): Promise<PolicyVersion> {
  const text = `name = "p"\n[window]\nenforce = true\ntarget_chars = 10\nlimit_chars = 100\nreserve_chars = 0\n[validation]\n${validation}\n`;
  const [version] = (await loadPolicies([{ path: "p.toml", text }], policySchema)).list();
  if (version === undefined) throw new Error("no policy");
  return version;
}

function refusalOf(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (GatewayError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

/** A schema whose compact JSON has exactly `chars` code points, `astral` of them outside the BMP. */
function schemaOfCodePoints(chars: number, astral = 0): Record<string, unknown> {
  const skeleton = JSON.stringify({ description: "" }).length;
  return { description: "😀".repeat(astral) + "x".repeat(chars - skeleton - astral) };
}

describe("validation.max_schema_chars", () => {
  it("defaults to 100,000 in code, so that shipped policies keep their identity", async () => {
    const policy = await policyWith('on_invalid = "error"');
    expect(policy.policy.validation).not.toHaveProperty("max_schema_chars");
    expect(maxSchemaCharsOf(policy.policy)).toBe(defaultMaxSchemaChars);
    expect(defaultMaxSchemaChars).toBe(100_000);
  });

  it("is refused by the policy loader when it is not a positive integer", async () => {
    await expect(policyWith("max_schema_chars = 0")).rejects.toMatchObject({ field: "validation.max_schema_chars" });
    await expect(policyWith("max_schema_chars = 1.5")).rejects.toMatchObject({ field: "validation.max_schema_chars" });
  });

  it("admits a client schema of exactly the cap, counted in code points", async () => {
    const policy = await policyWith("max_schema_chars = 300");
    expect(() =>
      admitResponseSchema(testSchemaValidators, schemaOfCodePoints(300, 40), policy, "client"),
    ).not.toThrow();
  });

  it("refuses a client schema one code point over the cap with 400, naming the limit and not the schema", async () => {
    const policy = await policyWith("max_schema_chars = 300");
    const error = refusalOf(() =>
      admitResponseSchema(testSchemaValidators, schemaOfCodePoints(301, 40), policy, "client"),
    );
    expect(error).toMatchObject({ code: "INVALID_REQUEST", status: 400, details: { param: "response_schema" } });
    expect(error.message).toBe(
      `The response schema has 301 characters as compact JSON; policy ${policy.ref} allows at most 300 (validation.max_schema_chars). Nothing was sent.`,
    );
  });

  it("does not cap a named schema", async () => {
    const policy = await policyWith("max_schema_chars = 300");
    expect(() => admitResponseSchema(testSchemaValidators, schemaOfCodePoints(5_000), policy, "named")).not.toThrow();
  });
});

describe("admitResponseSchema refuses what no validator could finish", () => {
  it("refuses a loop of references under a policy that validates answers", async () => {
    const policy = await policyWith("enabled = true");
    expect(
      refusalOf(() => admitResponseSchema(testSchemaValidators, { allOf: [{ $ref: "#" }] }, policy, "client")).message,
    ).toMatch(/refers to itself/);
  });

  it("refuses a loop of references under a policy that does not validate answers", async () => {
    const policy = await policyWith("enabled = false");
    expect(
      refusalOf(() => admitResponseSchema(testSchemaValidators, { not: { $ref: "#" } }, policy, "named")).status,
    ).toBe(400);
  });
});

describe("an exhausted stack is an answer, not a 500", () => {
  it("refuses a schema whose compilation exhausts the stack as too complex", () => {
    const overflowing = () => {
      throw new RangeError("Maximum call stack size exceeded");
    };
    expect(compileResponseSchema({ type: "string" }, overflowing)).toEqual({ refusal: "too-complex" });
  });

  it("compiles what it can with the Ajv it is given", () => {
    const outcome = compileResponseSchema({ type: "string" }, (dialect, discriminator) =>
      createAjv(dialect, discriminator),
    );
    expect("validate" in outcome && outcome.validate("text")).toBe(true);
  });

  it("reports a validation that exhausts the stack as an invalid answer with keyword nesting", () => {
    const overflowing: CompiledValidator = {
      validate: Object.assign(
        () => {
          throw new RangeError("Maximum call stack size exceeded");
        },
        { errors: null },
      ) as unknown as CompiledValidator["validate"],
      schema: {},
      dialect: "2020-12",
    };
    expect(validateParsedAnswer(overflowing, {})).toEqual({
      valid: false,
      errors: [expect.objectContaining({ validation_path: "", validation_keyword: "nesting" })],
    });
  });

  it("does not walk an answer nested deeper than a request may be", () => {
    const tree = { $ref: "#/$defs/node", $defs: { node: { type: "array", items: { $ref: "#/$defs/node" } } } };
    expect(validateAnswer(validatorOf(tree), `${"[".repeat(512)}${"]".repeat(512)}`)).toEqual({
      valid: true,
      errors: [],
    });
    expect(validateAnswer(validatorOf(tree), `${"[".repeat(513)}${"]".repeat(513)}`).errors[0]).toMatchObject({
      validation_keyword: "nesting",
    });
  });

  it("offers no repair for an answer too deep to copy", () => {
    const rule = {
      name: "unwrap",
      at: "/next",
      when: { pointer: "/kind", equals: "x" },
      envelope: "choices",
      require_key: "kind",
    };
    const nested = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const deep = `{"kind":"x","next":{"choices":[{"kind":"k","deep":${nested}}]}}`;
    const check = checkAnswer(validatorOf({ type: "object", required: ["never"] }), deep, [rule]);
    expect(check).toEqual({ validation: expect.objectContaining({ valid: false }) });
  });
});
