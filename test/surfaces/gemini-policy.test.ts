import { describe, expect, it } from "vitest";
import type { Policy } from "../../src/policy/policy.js";
import { geminiPolicyOf } from "../../src/surfaces/gemini/gemini-policy.js";
import { policyVersion } from "../window/fixtures.js";

describe("a policy's [gemini] section", () => {
  it("reads the section the policy holds", () => {
    const policy: Policy = {
      ...policyVersion().policy,
      gemini: { projection: "outer", schema_field: "responseSchema", unions: "common_shape" },
    };
    expect(geminiPolicyOf(policy)).toEqual({
      projection: "outer",
      schema_field: "responseSchema",
      unions: "common_shape",
    });
  });

  it.each([
    ["no section", undefined],
    ["a section that is not a table", "nested"],
    ["values outside the schema's", { projection: "deep", schema_field: "schema", unions: "all" }],
  ])("takes the policy schema's defaults for %s", (_, section) => {
    const policy: Policy = { ...policyVersion().policy, gemini: section };
    expect(geminiPolicyOf(policy)).toEqual({
      projection: "nested",
      schema_field: "responseJsonSchema",
      unions: undefined,
    });
  });
});
