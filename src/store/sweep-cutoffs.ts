import { jobLimitsOf, type PolicyVersion, sessionLimitsOf } from "../policy/policy.js";
import type { SweepCutoffs } from "./store.js";

const hourMs = 60 * 60 * 1000;

/**
 * Days an expired job or session is remembered as such after its expiry: a poll is told 410 JOB_EXPIRED, a
 * continuation SESSION_EXPIRED, not the 404 or SESSION_NOT_FOUND of an id never made.
 */
export const tombstoneDays = 7;

/**
 * The cutoffs of a sweep at `now` under every policy version the gateway knows: a job's answer is kept for the
 * longest `keep_hours` of any of them, and its tombstone, as a session, `tombstoneDays` past the longest `keep_hours`
 * or `idle_hours`, so that no version's rows go before their time (a job or session of another version lives no
 * shorter than it would under its own).
 */
export function sweepCutoffs(policies: readonly PolicyVersion[], now: number): SweepCutoffs {
  let keepHours = 0;
  let idleHours = 0;
  for (const { policy } of policies) {
    keepHours = Math.max(keepHours, jobLimitsOf(policy).keep_hours);
    idleHours = Math.max(idleHours, sessionLimitsOf(policy).idle_hours);
  }
  const jobsEndedBefore = now - keepHours * hourMs;
  const tombstoneMs = tombstoneDays * 24 * hourMs;
  return {
    now,
    jobsEndedBefore,
    jobTombstonesEndedBefore: jobsEndedBefore - tombstoneMs,
    sessionsIdleSince: now - idleHours * hourMs - tombstoneMs,
  };
}
