/** A whole Anthropic Messages answer as a Chat Completions `chat.completion`. */

import type { ChatCompletion, ChatCompletionMessageFunctionToolCall } from "openai/resources/chat/completions";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import type { TranslationContext } from "../../translation.js";
import { finishReasonOf } from "./finish-reason.js";
import { readUsage, type TokenCounts, usageOf } from "./usage.js";

/** A whole Messages answer as a `chat.completion`; thinking blocks are not content. */
export function answer(native: JsonObject, context: TranslationContext): JsonObject {
  const blocks = (Array.isArray(native.content) ? native.content : []).filter(isObject);
  const texts = blocks.filter((block) => block.type === "text").map((block) => String(block.text ?? ""));
  const toolCalls = blocks
    .filter((block) => block.type === "tool_use")
    .map(
      (block): ChatCompletionMessageFunctionToolCall => ({
        id: String(block.id),
        type: "function",
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      }),
    );
  const counts: TokenCounts = { input: 0, cacheRead: 0, cacheCreation: 0, output: 0 };
  readUsage(native.usage, counts);
  const completion: ChatCompletion = {
    id: context.id,
    object: "chat.completion",
    created: context.created,
    model: context.publicModel,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: texts.length === 0 ? null : texts.join(""),
          refusal: null,
          ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
        },
        finish_reason: finishReasonOf(native.stop_reason),
        logprobs: null,
      },
    ],
    usage: usageOf(counts),
  };
  return { ...completion };
}
