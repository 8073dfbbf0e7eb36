import { GatewayError } from "../errors/gateway-error.js";
import type { PromptSize } from "../errors/prompt-size.js";
import type { PolicyVersion } from "../policy/policy.js";

/** Whether a measured call stays inside the window: `conservative_total_chars <= limit_chars`. */
export function withinWindow(size: PromptSize): boolean {
  return size.conservative_total_chars <= size.limit_chars;
}

/** Whether a measured call carries no more media parts than its policy allows. */
export function withinMediaLimit(size: PromptSize): boolean {
  return size.media_parts_limit === undefined || size.media_parts <= size.media_parts_limit;
}

/**
 * Throws `INVESTIGATION_PROMPT_LIMIT` when the policy enforces its window and the call
 * exceeds it, in characters or in media parts. The message states only sizes, never content.
 */
export function enforceWindow(size: PromptSize, policy: PolicyVersion): void {
  if (!policy.policy.window.enforce) return;
  if (!withinMediaLimit(size)) {
    throw new GatewayError(
      "INVESTIGATION_PROMPT_LIMIT",
      400,
      `This call carries ${size.media_parts} media parts (images, audio, video, PDF), over the limit of ${size.media_parts_limit} of policy ${size.policy}. Nothing was sent and nothing was truncated.`,
      { promptSize: size },
    );
  }
  if (withinWindow(size)) return;
  const what = size.check === "preflight" ? "with the reserve" : "as it would be sent to the provider";
  throw new GatewayError(
    "INVESTIGATION_PROMPT_LIMIT",
    400,
    `The logical input of this call is ${size.conservative_total_chars} characters ${what}, over the limit of ${size.limit_chars} of policy ${size.policy}. Nothing was sent and nothing was truncated.`,
    { promptSize: size },
  );
}
