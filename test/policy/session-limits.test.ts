import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadPolicies, PolicyFileError } from "../../src/policy/load-policies.js";
import { defaultSessionLimits, type PolicyVersion, sessionLimitsOf } from "../../src/policy/policy.js";

const policySchema = JSON.parse(readFileSync(new URL("../../schemas/policy.schema.json", import.meta.url), "utf8"));

const base = `name = "p"
[window]
enforce = true
target_chars = 10
limit_chars = 20
reserve_chars = 1
`;

async function load(text: string): Promise<PolicyVersion> {
  const [version] = (await loadPolicies([{ path: "test.toml", text }], policySchema)).list();
  return version as PolicyVersion;
}

describe("the policy's [session] table", () => {
  it("gives seed 004's limits to a policy without it, and adds nothing to its identity", async () => {
    const version = await load(base);
    expect(version.policy.session).toBeUndefined();
    expect(sessionLimitsOf(version.policy)).toEqual({
      idle_hours: 24,
      max_days: 7,
      max_start_tokens: 900_000,
      max_total_tokens: 1_000_000,
      queue_seconds: 300,
    });
  });

  it("takes its members, the rest at their defaults", async () => {
    const version = await load(`${base}\n[session]\nidle_hours = 2\nmax_total_tokens = 5000\n`);
    expect(sessionLimitsOf(version.policy)).toEqual({
      ...defaultSessionLimits,
      idle_hours: 2,
      max_total_tokens: 5000,
    });
  });

  it.each([
    ["a zero lifetime", "idle_hours = 0"],
    ["a fractional token cap", "max_start_tokens = 1.5"],
    ["a string", 'max_days = "7"'],
    ["an unknown member", "max_turns = 5"],
  ])("refuses %s, naming the field", async (_name, line) => {
    const error = await loadPolicies([{ path: "bad.toml", text: `${base}\n[session]\n${line}\n` }], policySchema).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(PolicyFileError.isInstance(error)).toBe(true);
    expect((error as PolicyFileError).field).toMatch(/^session/);
  });
});
