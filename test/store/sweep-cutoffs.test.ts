import { describe, expect, it } from "vitest";
import type { Policy, PolicyVersion } from "../../src/policy/policy.js";
import { sweepCutoffs } from "../../src/store/sweep-cutoffs.js";

const hour = 3_600_000;

function version(tables: Partial<Pick<Policy, "jobs" | "session">>): PolicyVersion {
  const policy = { name: "p", ...tables } as Policy;
  return { policy, sha256: "0".repeat(64), ref: "p@000000000000", source: "p.toml" };
}

describe("sweepCutoffs", () => {
  it("keeps jobs and sessions for the longest time any known version keeps them, defaults included", () => {
    const now = 1_000 * hour;
    expect(sweepCutoffs([version({})], now)).toEqual({
      now,
      jobsEndedBefore: now - 24 * hour,
      sessionsIdleSince: now - 24 * hour,
    });
    const longer = version({
      jobs: { mode: "gateway", max_running: 1, queue_seconds: 1, keep_hours: 72 },
      session: { idle_hours: 48, max_days: 7, max_start_tokens: 1, max_total_tokens: 1, queue_seconds: 1 },
    });
    expect(sweepCutoffs([version({}), longer], now)).toEqual({
      now,
      jobsEndedBefore: now - 72 * hour,
      sessionsIdleSince: now - 48 * hour,
    });
  });
});
