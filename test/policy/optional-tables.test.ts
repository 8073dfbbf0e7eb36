import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadPolicies, PolicyFileError } from "../../src/policy/load-policies.js";
import {
  deadlineSecondsOf,
  defaultSessionLimits,
  type PolicyVersion,
  sessionLimitsOf,
} from "../../src/policy/policy.js";

const policySchema = JSON.parse(readFileSync(new URL("../../schemas/policy.schema.json", import.meta.url), "utf8"));

const window = `
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

async function refusal(text: string): Promise<PolicyFileError> {
  const error = await loadPolicies([{ path: "bad.toml", text }], policySchema).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!PolicyFileError.isInstance(error)) throw new Error("expected a PolicyFileError");
  return error;
}

describe("the policy's upstream deadline", () => {
  it("takes seconds, fractions included", async () => {
    const version = await load(`name = "p"\n${window}\n[upstream]\ndeadline_seconds = 0.5\n`);
    expect(deadlineSecondsOf(version.policy)).toBe(0.5);
  });

  it("defaults to 960 seconds once the table is present", async () => {
    const version = await load(`name = "p"\n${window}\n[upstream]\n`);
    expect(version.policy.upstream).toEqual({ deadline_seconds: 960 });
  });

  it("adds nothing to a policy without the table, so its identity stays what it was", async () => {
    const version = await load(`name = "p"\n${window}`);
    expect(version.policy.upstream).toBeUndefined();
    expect(deadlineSecondsOf(version.policy)).toBe(960);
  });

  it.each([
    ["zero", "deadline_seconds = 0"],
    ["a string", 'deadline_seconds = "960"'],
    ["an unknown member", "timeout = 5"],
  ])("refuses %s", async (_name, line) => {
    const error = await refusal(`name = "p"\n${window}\n[upstream]\n${line}\n`);
    expect(error.field).toMatch(/^upstream/);
  });
});

describe("the policy's [session] table", () => {
  it("gives seed 004's limits to a policy without it, and adds nothing to its identity", async () => {
    const version = await load(`name = "p"\n${window}`);
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
    const version = await load(`name = "p"\n${window}\n[session]\nidle_hours = 2\nmax_total_tokens = 5000\n`);
    expect(sessionLimitsOf(version.policy)).toEqual({ ...defaultSessionLimits, idle_hours: 2, max_total_tokens: 5000 });
  });

  it.each([
    ["a zero lifetime", "idle_hours = 0"],
    ["a fractional token cap", "max_start_tokens = 1.5"],
    ["a string", 'max_days = "7"'],
    ["an unknown member", "max_turns = 5"],
  ])("refuses %s, naming the field", async (_name, line) => {
    const error = await refusal(`name = "p"\n${window}\n[session]\n${line}\n`);
    expect(error.field).toMatch(/^session/);
  });
});
