import { containsJsonValue } from "../json/embedded-json.js";
import type { LogicalCall } from "../logical-call.js";
import type { PolicyVersion } from "../policy/policy.js";
import { codePointsOf, compactJsonCodePoints } from "./code-points.js";

/** The `prompt_size` object of contract section 3. */
export interface PromptSize {
  check: "preflight" | "provider";
  system_chars: number;
  message_chars: number;
  tool_chars: number;
  schema_chars: number;
  cache_prefix_chars: number;
  media_parts: number;
  schema_deduplicated: boolean;
  total_chars: number;
  reserve_chars: number;
  conservative_total_chars: number;
  target_chars: number;
  limit_chars: number;
  over_target: boolean;
  policy: string;
  /** Present and true when the cached prefix was estimated from a token count. */
  cache_prefix_estimated?: boolean;
}

/** What the measurement needs besides the call itself. */
export interface MeasureContext {
  check: PromptSize["check"];
  policy: PolicyVersion;
  /** Characters of the cached prefix the call refers to (0 when none). */
  cachePrefixChars: number;
  cachePrefixEstimated?: boolean;
}

/**
 * Measures a logical call in code points. The preflight adds the policy's reserve and
 * counts a native schema that also stands in the system text once; the provider check
 * measures the exact representation sent, with no reserve.
 */
export function measure(call: LogicalCall, context: MeasureContext): PromptSize {
  const window = context.policy.policy.window;
  const preflight = context.check === "preflight";
  const systemChars = codePointsOf(call.system);
  const messageChars = codePointsOf(call.messages);
  let toolChars = 0;
  for (const tool of call.tools) toolChars += compactJsonCodePoints(tool);
  const schemaDeduplicated =
    preflight &&
    call.responseSchema !== undefined &&
    call.system.some((text) => containsJsonValue(text, call.responseSchema));
  const schemaChars = schemaDeduplicated ? 0 : compactJsonCodePoints(call.responseSchema);
  const totalChars = systemChars + messageChars + toolChars + schemaChars + context.cachePrefixChars;
  const reserveChars = preflight ? window.reserve_chars : 0;
  const size: PromptSize = {
    check: context.check,
    system_chars: systemChars,
    message_chars: messageChars,
    tool_chars: toolChars,
    schema_chars: schemaChars,
    cache_prefix_chars: context.cachePrefixChars,
    media_parts: call.mediaParts,
    schema_deduplicated: schemaDeduplicated,
    total_chars: totalChars,
    reserve_chars: reserveChars,
    conservative_total_chars: totalChars + reserveChars,
    target_chars: window.target_chars,
    limit_chars: window.limit_chars,
    over_target: totalChars > window.target_chars,
    policy: context.policy.ref,
  };
  if (context.cachePrefixEstimated) size.cache_prefix_estimated = true;
  return size;
}
