import type { Deps } from "../deps.js";
import type { PromptSize } from "../errors/prompt-size.js";
import { admitCall, keyScope, type LimitScope, policyScope } from "../limits/admission.js";
import { deadlineSecondsOf, type PolicyVersion } from "../policy/policy.js";
import type { Recorder } from "./call-recorder.js";
import type { Caller } from "./caller.js";
import type { ResponseHeaders } from "./response-headers.js";

/** What admitting a call under its limits needs: who calls, under which policy, its size, and where its end is noted. */
export interface LimitedCall {
  deps: Deps;
  caller: Caller;
  policy: PolicyVersion;
  /** The first attempt's size as the provider check (else the preflight) counted it. */
  size: PromptSize;
  headers: ResponseHeaders;
  recorder: Recorder;
}

/**
 * Admits a call under its policy's limits (its principal's windows under that policy) and its key's (the key's
 * windows across policies), or throws the 429 of the window that has no room; nothing is sent before. An admitted
 * call's answer carries the windows' headers, and its end (the recorder settling it) reconciles its tokens with
 * the provider's usage and frees its place in flight.
 */
export async function admitUnderLimits({ deps, caller, policy, size, headers, recorder }: LimitedCall): Promise<void> {
  const scopes: LimitScope[] = [];
  const policyLimits = policy.policy.limits;
  if (policyLimits !== undefined) {
    scopes.push({ scope: policyScope(policy.policy.name, await caller.principal()), limits: policyLimits });
  }
  const key = caller.key;
  if (key?.limits !== undefined) scopes.push({ scope: keyScope(key.id), limits: key.limits });
  if (scopes.length === 0) return;
  const admission = await admitCall(deps.store, {
    scopes,
    chars: size.conservative_total_chars,
    charsPerToken: policy.policy.cache.chars_per_token,
    leaseMs: deadlineSecondsOf(policy.policy) * 1000,
    now: deps.now().getTime(),
  });
  if (admission === undefined) return;
  headers.limits(admission.headers);
  recorder.hold(() => {
    const { usage, decision } = recorder.record;
    const reported = usage?.input_tokens !== undefined || usage?.output_tokens !== undefined;
    const tokens = reported ? (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0) : undefined;
    return admission.end({ tokens, cancelled: decision === "cancelled" });
  });
}
