import { describe, expect, it } from "vitest";
import { startDeadline } from "../../src/pipeline/deadline.js";
import { deadlineSecondsOf, type Policy } from "../../src/policy/policy.js";
import { boundedPolicy } from "../window/fixtures.js";

describe("a call's upstream deadline", () => {
  it("aborts its signal when it passes", async () => {
    const deadline = startDeadline(0.02);
    expect(deadline.passed()).toBe(false);
    await new Promise((resolve) => deadline.signal.addEventListener("abort", resolve));
    expect(deadline.passed()).toBe(true);
    expect(deadline.signal.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("never fires once cleared", async () => {
    const deadline = startDeadline(0.02);
    deadline.clear();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(deadline.passed()).toBe(false);
  });

  it("is seed 004's 960 seconds for a policy that sets none, else the policy's", () => {
    const policy: Policy = boundedPolicy.policy;
    expect(policy.upstream).toBeUndefined();
    expect(deadlineSecondsOf(policy)).toBe(960);
    expect(deadlineSecondsOf({ ...policy, upstream: { deadline_seconds: 2.5 } })).toBe(2.5);
  });
});
