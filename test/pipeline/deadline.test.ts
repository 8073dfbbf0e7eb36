import { describe, expect, it } from "vitest";
import { startDeadline } from "../../src/pipeline/deadline.js";
import { deadlineSecondsOf, type Policy } from "../../src/policy/policy.js";
import { boundedPolicy } from "../window/fixtures.js";

describe("a call's upstream deadline", () => {
  it("aborts its signal when it passes", async () => {
    const deadline = startDeadline(0.02);
    expect(deadline.passed()).toBe(false);
    await new Promise<void>((resolve) => deadline.signal.addEventListener("abort", resolve));
    expect(deadline.passed()).toBe(true);
    expect(deadline.signal.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("never fires once cleared", async () => {
    const deadline = startDeadline(0.02);
    deadline.clear();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(deadline.passed()).toBe(false);
  });

  it("aborts its signal when the client goes away, which is not the deadline passing", () => {
    const client = new AbortController();
    const deadline = startDeadline(60, client.signal);
    client.abort(new Error("client left"));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toMatchObject({ message: "client left" });
    expect(deadline.passed()).toBe(false);
    deadline.clear();
  });

  it("starts aborted for a client that already left, and stops watching the client once cleared", () => {
    const gone = new AbortController();
    gone.abort();
    expect(startDeadline(60, gone.signal).signal.aborted).toBe(true);
    const client = new AbortController();
    const deadline = startDeadline(60, client.signal);
    deadline.clear();
    client.abort();
    expect(deadline.signal.aborted).toBe(false);
  });

  it("is seed 004's 960 seconds for a policy that sets none, else the policy's", () => {
    const policy: Policy = boundedPolicy.policy;
    expect(policy.upstream).toBeUndefined();
    expect(deadlineSecondsOf(policy)).toBe(960);
    expect(deadlineSecondsOf({ ...policy, upstream: { deadline_seconds: 2.5 } })).toBe(2.5);
  });
});
