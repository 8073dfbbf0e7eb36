import { emptyCall, type LogicalCall } from "../../src/logical-call.js";
import type { Policy, PolicyVersion } from "../../src/policy/policy.js";

/** The ref every test policy carries, so that `prompt_size.policy` can be checked literally. */
export const boundedRef = "investigation.bounded@000000000000";

/** A policy version written by hand: enforced 10,000 / 20,000 / 1,500 unless `window` says otherwise. */
export function policyVersion(window: Partial<Policy["window"]> = {}): PolicyVersion {
  return {
    policy: {
      name: "investigation.bounded",
      window: { enforce: true, target_chars: 10000, limit_chars: 20000, reserve_chars: 1500, ...window },
      gemini: { projection: "nested", schema_field: "responseJsonSchema" },
      validation: { enabled: true, on_invalid: "error" },
      repair: [],
      cache: { unknown_prefix: "reject", chars_per_token: 4 },
      upstream_errors: { text: "redacted" },
    },
    sha256: "0".repeat(64),
    ref: boundedRef,
    source: "investigation.bounded.toml",
  };
}

/** The enforced investigation policy: 10,000 target, 20,000 limit, 1,500 reserve. */
export const boundedPolicy = policyVersion();

/** A logical call with only the given members set. */
export function logicalCall(members: Partial<LogicalCall> = {}): LogicalCall {
  return { ...emptyCall(), ...members };
}
