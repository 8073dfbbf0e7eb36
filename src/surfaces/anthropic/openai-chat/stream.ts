/**
 * A streamed Anthropic Messages answer as Chat Completions `chat.completion.chunk` objects: text and
 * tool-call deltas, the finish reason, and the usage chunk when the client asked for it.
 */

import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import type { ChatStreamTranslator, TranslationContext } from "../../translation.js";
import { finishReasonOf } from "./finish-reason.js";
import { readUsage, type TokenCounts, usageOf } from "./usage.js";

/** A count the provider reports, or 0 when absent. */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** A tool call being streamed: its index among the answer's tool calls, and whether arguments arrived. */
interface StreamedToolCall {
  index: number;
  hasArguments: boolean;
}

/** The translator of one streamed Messages answer into `chat.completion.chunk` objects. */
export function stream(body: JsonObject, context: TranslationContext): ChatStreamTranslator {
  const counts: TokenCounts = { input: 0, cacheRead: 0, cacheCreation: 0, output: 0 };
  /** Tool calls by their content block's index. */
  const toolCalls = new Map<number, StreamedToolCall>();
  const options = isObject(body.stream_options) ? body.stream_options : {};

  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finishReason: ChatCompletionChunk.Choice["finish_reason"] = null,
  ): JsonObject => {
    const value: ChatCompletionChunk = {
      id: context.id,
      object: "chat.completion.chunk",
      created: context.created,
      model: context.publicModel,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    };
    return { ...value };
  };

  const toolDelta = (toolCall: ChatCompletionChunk.Choice.Delta.ToolCall): JsonObject =>
    chunk({ tool_calls: [toolCall] });

  return {
    event(native) {
      const index = count(native.index);
      const block = isObject(native.content_block) ? native.content_block : {};
      const delta = isObject(native.delta) ? native.delta : {};
      switch (native.type) {
        case "message_start": {
          readUsage(isObject(native.message) ? native.message.usage : undefined, counts);
          return [chunk({ role: "assistant", content: "" })];
        }
        case "content_block_start": {
          if (block.type === "text" && typeof block.text === "string" && block.text !== "") {
            return [chunk({ content: block.text })];
          }
          if (block.type !== "tool_use") return [];
          const toolCall = { index: toolCalls.size, hasArguments: false };
          toolCalls.set(index, toolCall);
          return [
            toolDelta({
              index: toolCall.index,
              id: String(block.id),
              type: "function",
              function: { name: String(block.name), arguments: "" },
            }),
          ];
        }
        case "content_block_delta": {
          if (delta.type === "text_delta" && typeof delta.text === "string") return [chunk({ content: delta.text })];
          const toolCall = toolCalls.get(index);
          if (delta.type !== "input_json_delta" || toolCall === undefined || typeof delta.partial_json !== "string") {
            return [];
          }
          if (delta.partial_json === "") return [];
          toolCall.hasArguments = true;
          return [toolDelta({ index: toolCall.index, function: { arguments: delta.partial_json } })];
        }
        case "content_block_stop": {
          // A tool call without input streams no JSON: its arguments are the empty object.
          const toolCall = toolCalls.get(index);
          if (toolCall === undefined || toolCall.hasArguments) return [];
          toolCall.hasArguments = true;
          return [toolDelta({ index: toolCall.index, function: { arguments: "{}" } })];
        }
        case "message_delta": {
          readUsage(native.usage, counts);
          return delta.stop_reason == null ? [] : [chunk({}, finishReasonOf(delta.stop_reason))];
        }
        default:
          return [];
      }
    },
    end() {
      if (options.include_usage !== true) return [];
      const value: ChatCompletionChunk = {
        id: context.id,
        object: "chat.completion.chunk",
        created: context.created,
        model: context.publicModel,
        choices: [],
        usage: usageOf(counts),
      };
      return [{ ...value }];
    },
  };
}
