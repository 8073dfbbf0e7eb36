import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { closestName } from "../../src/policy/closest-name.js";
import { loadPolicies, PolicyFileError } from "../../src/policy/load-policies.js";
import { createPolicyRegistry } from "../../src/policy/policy-registry.js";

const policySchema = JSON.parse(readFileSync(new URL("../../schemas/policy.schema.json", import.meta.url), "utf8"));

const minimal = `name = "minimal"
[window]
enforce = true
target_chars = 10
limit_chars = 20
reserve_chars = 5
`;

async function refusal(text: string, path = "policies/x.toml"): Promise<PolicyFileError> {
  const error = await loadPolicies([{ path, text }], policySchema).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!PolicyFileError.isInstance(error)) throw new Error(`expected a PolicyFileError, got ${String(error)}`);
  return error;
}

describe("a policy file's refusal message", () => {
  it("reports a misspelt key as unknown, with the table and the key it likely meant, not as a missing one", async () => {
    const error = await refusal(minimal.replace("limit_chars = 20", "limit_char = 20"));
    expect(error.message).toBe("policies/x.toml: [window] has an unknown key limit_char (did you mean limit_chars?)");
    expect(error.field).toBe("window.limit_char");
  });

  it("reports a misspelt top-level key at the top level", async () => {
    const error = await refusal(`descripton = "typo"\n${minimal}`);
    expect(error.message).toBe(
      "policies/x.toml: the top level has an unknown key descripton (did you mean description?)",
    );
  });

  it("lists the table's keys when no known key is near the unknown one", async () => {
    const error = await refusal(`${minimal}\n[gemini]\ncompletely_different = 1\n`);
    expect(error.message).toMatch(
      /^policies\/x\.toml: \[gemini\] has an unknown key completely_different \(known keys: projection, schema_field, unions\)$/,
    );
  });

  it("names an unknown key inside an array of tables by its index", async () => {
    const rule = `[[repair]]\nname = "r"\nat = "/a"\nwhen = { pointer = "/b", equals = true }\nenvelope = "choices"\nrequire_key = "kind"\nrequire_keys = 1\n`;
    const error = await refusal(`${minimal}\n${rule}`);
    expect(error.message).toBe(
      "policies/x.toml: repair[0] has an unknown key require_keys (did you mean require_key?)",
    );
  });

  it("reports a TOML syntax error with its line and column and no (root)", async () => {
    const error = await refusal('name = "minimal"\n[window\nenforce = true\n');
    expect(error.message).toMatch(/^policies\/x\.toml: TOML syntax error at line 2, column \d+: \S/);
    expect(error.message).not.toContain("(root)");
    expect(error.message).not.toContain("\n");
  });

  it("still reports a missing key as required when nothing is misspelt", async () => {
    const error = await refusal(minimal.replace("limit_chars = 20\n", ""));
    expect(error.message).toBe("policies/x.toml: window.limit_chars: is required");
  });
});

describe("closestName", () => {
  it.each([
    ["limit_char", "limit_chars"],
    ["Limit_Chars", "limit_chars"],
    ["reserve_char", "reserve_chars"],
    ["enforced", "enforce"],
  ])("takes %s for %s", (name, meant) => {
    expect(closestName(name, ["enforce", "target_chars", "limit_chars", "reserve_chars"])).toBe(meant);
  });

  it("suggests nothing for a name far from every candidate", () => {
    expect(closestName("temperature", ["enforce", "target_chars", "limit_chars"])).toBeUndefined();
  });
});

describe("POLICY_NOT_FOUND", () => {
  it("lists the known policy names, sorted, but neither the requested reference nor any policy's content", async () => {
    const versions = (
      await loadPolicies(
        [
          { path: "b.toml", text: minimal.replace('"minimal"', '"beta"') },
          { path: "a.toml", text: minimal.replace('"minimal"', '"alpha"') },
        ],
        policySchema,
      )
    ).list();
    const registry = createPolicyRegistry(versions);
    const error = (() => {
      try {
        registry.resolve("requested-secret-ref");
      } catch (caught) {
        return caught as Error & { code: string; status: number };
      }
    })();
    expect(error?.code).toBe("POLICY_NOT_FOUND");
    expect(error?.status).toBe(404);
    expect(error?.message).toBe(
      "No known policy version matches the requested policy reference. Known policies: alpha, beta.",
    );
    expect(error?.message).not.toContain("requested-secret-ref");
    expect(error?.message).not.toContain("limit_chars");
  });

  it("lists the names also for an unknown pinned version", () => {
    const registry = createPolicyRegistry([]);
    expect(() => registry.resolve("alpha@0123456789ab")).toThrow("Known policies: none.");
  });
});
