import { describe, expect, it } from "vitest";
import type { Policy, PolicyVersion } from "../../src/policy/policy.js";
import { sweepCutoffs, tombstoneDays } from "../../src/store/sweep-cutoffs.js";

const hour = 3_600_000;
const week = 7 * 24 * hour;

function version(tables: Partial<Pick<Policy, "jobs" | "session">>): PolicyVersion {
  const policy = { name: "p", ...tables } as Policy;
  return { policy, sha256: "0".repeat(64), ref: "p@000000000000", source: "p.toml" };
}

describe("sweepCutoffs", () => {
  it("keeps jobs and sessions for the longest time any known version keeps them, and their tombstones a week longer", () => {
    expect(tombstoneDays).toBe(7);
    const now = 1_000 * hour;
    expect(sweepCutoffs([version({})], now)).toEqual({
      now,
      jobsEndedBefore: now - 24 * hour,
      jobTombstonesEndedBefore: now - 24 * hour - week,
      sessionsIdleSince: now - 24 * hour - week,
    });
    const longer = version({
      jobs: { mode: "gateway", max_running: 1, queue_seconds: 1, keep_hours: 72 },
      session: { idle_hours: 48, max_days: 7, max_start_tokens: 1, max_total_tokens: 1, queue_seconds: 1 },
    });
    expect(sweepCutoffs([version({}), longer], now)).toEqual({
      now,
      jobsEndedBefore: now - 72 * hour,
      jobTombstonesEndedBefore: now - 72 * hour - week,
      sessionsIdleSince: now - 48 * hour - week,
    });
  });
});
