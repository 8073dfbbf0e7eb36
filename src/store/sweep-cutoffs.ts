import { jobLimitsOf, type PolicyVersion, sessionLimitsOf } from "../policy/policy.js";
import type { SweepCutoffs } from "./store.js";

const hourMs = 60 * 60 * 1000;

/**
 * The cutoffs of a sweep at `now` under every policy version the gateway knows: a job is kept for the longest
 * `keep_hours` of any of them and a session for the longest `idle_hours`, so that no version's rows go before their
 * time (a job or session of another version lives no shorter than it would under its own).
 */
export function sweepCutoffs(policies: readonly PolicyVersion[], now: number): SweepCutoffs {
  let keepHours = 0;
  let idleHours = 0;
  for (const { policy } of policies) {
    keepHours = Math.max(keepHours, jobLimitsOf(policy).keep_hours);
    idleHours = Math.max(idleHours, sessionLimitsOf(policy).idle_hours);
  }
  return { now, jobsEndedBefore: now - keepHours * hourMs, sessionsIdleSince: now - idleHours * hourMs };
}
