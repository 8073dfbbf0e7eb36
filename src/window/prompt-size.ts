import type { PromptSize } from "../errors/prompt-size.js";
import { containsJsonValue } from "../json/embedded-json.js";
import { type LogicalCall, type OtherField, textHolds, textString } from "../logical-call.js";
import type { PolicyVersion } from "../policy/policy.js";
import { codePointsOf, compactJsonCodePoints } from "./code-points.js";

/** The cached prefix a call refers to, as far as the gateway knows it. */
export interface CachedPrefix {
  /** Code points of the prefix (0 when the call has none). */
  chars: number;
  /** True when `chars` was estimated from the provider's token count. */
  estimated: boolean;
  /** Whether the prefix holds the call's native response schema (same canonical JSON). */
  containsSchema: boolean;
}

/** The prefix of a call without one. */
export const noCachedPrefix: CachedPrefix = { chars: 0, estimated: false, containsSchema: false };

/** What the measurement needs besides the call itself. */
export interface MeasureContext {
  check: PromptSize["check"];
  policy: PolicyVersion;
  cachedPrefix: CachedPrefix;
}

/** The code points of a call's parts, which both checks of an unchanged call share. */
export interface CallCounts {
  /** System texts, messages, tools and other fields outside an inline cached prefix. */
  system: number;
  messages: number;
  tools: number;
  other: number;
  /** The name and description of the response format (its schema is counted by `measure`). */
  schemaTexts: number;
  /** The inline cached prefix: its system texts, messages, tools and other fields. */
  inline: number;
}

function otherChars(fields: readonly OtherField[]): number {
  let chars = 0;
  for (const field of fields) chars += field.chars;
  return chars;
}

/** Counts the parts of a logical call (its schema is counted by `measure`, which may de-duplicate it). */
export function countCall(call: LogicalCall): CallCounts {
  const inline = call.inlinePrefix ?? { tools: 0, system: 0, messages: 0, other: 0 };
  let tools = 0;
  let inlineTools = 0;
  call.tools.forEach((tool, index) => {
    const chars = compactJsonCodePoints(tool);
    if (index < inline.tools) inlineTools += chars;
    else tools += chars;
  });
  const inlineSystem = codePointsOf(call.system.slice(0, inline.system));
  const inlineMessages = codePointsOf(call.messages.slice(0, inline.messages));
  const inlineOther = otherChars(call.other.slice(0, inline.other));
  return {
    system: codePointsOf(call.system.slice(inline.system)),
    messages: codePointsOf(call.messages.slice(inline.messages)),
    tools,
    other: otherChars(call.other.slice(inline.other)),
    schemaTexts: codePointsOf(call.schemaTexts),
    inline: inlineTools + inlineSystem + inlineMessages + inlineOther,
  };
}

/**
 * Measures a logical call in code points. The preflight adds the policy's reserve and
 * counts a native schema that also stands in the system text once; the provider check
 * measures the exact representation sent, with no reserve. `counts` are the call's own,
 * when an earlier check of the same call already has them.
 */
export function measure(call: LogicalCall, context: MeasureContext, counts = countCall(call)): PromptSize {
  const window = context.policy.policy.window;
  const preflight = context.check === "preflight";
  const schemaDeduplicated =
    preflight &&
    call.responseSchema !== undefined &&
    (context.cachedPrefix.containsSchema ||
      // A text without a `{` holds no JSON object: told from its bytes, without decoding it.
      call.system.some((text) => textHolds(text, "{") && containsJsonValue(textString(text), call.responseSchema)));
  const schemaChars = (schemaDeduplicated ? 0 : compactJsonCodePoints(call.responseSchema)) + counts.schemaTexts;
  const prefixChars = context.cachedPrefix.chars + counts.inline;
  const totalChars = counts.system + counts.messages + counts.tools + schemaChars + counts.other + prefixChars;
  const reserveChars = preflight ? window.reserve_chars : 0;
  const size: PromptSize = {
    check: context.check,
    system_chars: counts.system,
    message_chars: counts.messages,
    tool_chars: counts.tools,
    schema_chars: schemaChars,
    other_chars: counts.other,
    cache_prefix_chars: prefixChars,
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
  const mediaLimit = window.max_media_parts;
  if (mediaLimit !== undefined) size.media_parts_limit = mediaLimit;
  if (context.cachedPrefix.estimated) size.cache_prefix_estimated = true;
  return size;
}
