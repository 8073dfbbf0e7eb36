/** Anthropic's `stop_reason` as a Chat Completions `finish_reason`. */

import type { ChatCompletion } from "openai/resources/chat/completions";

/** Anthropic's `stop_reason` as a Chat Completions `finish_reason`; anything else finishes as `stop`. */
const finishReasons: Record<string, ChatCompletion.Choice["finish_reason"]> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/** `stopReason` as a `finish_reason`: `stop` when absent or unknown. */
export function finishReasonOf(stopReason: unknown): ChatCompletion.Choice["finish_reason"] {
  return (typeof stopReason === "string" ? finishReasons[stopReason] : undefined) ?? "stop";
}
