import { codePoints } from "../../window/code-points.js";
import type { PrefixEffectReader } from "../surface.js";
import { isObject, type JsonObject, textOf } from "../wire-fields.js";

/** How long OpenAI keeps a stored response by default: 30 days. */
const storedFor = 30 * 24 * 60 * 60 * 1000;

/** The characters of a response's output that a follow-up turn carries: texts, tool calls, summaries. */
function outputChars(response: JsonObject): number {
  let chars = 0;
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (!isObject(item)) continue;
    if (item.type === "message" || item.type === "reasoning") {
      for (const part of [
        ...(Array.isArray(item.content) ? item.content : []),
        ...(Array.isArray(item.summary) ? item.summary : []),
      ]) {
        if (isObject(part)) chars += codePoints(textOf(part.text ?? part.refusal ?? ""));
      }
    } else if (item.type === "function_call" || item.type === "custom_tool_call") {
      chars += codePoints(textOf(item.name ?? "")) + codePoints(textOf(item.arguments ?? item.input ?? ""));
    } else chars += codePoints(textOf(item));
  }
  return chars;
}

/** A stored Responses answer leaves its history for `previous_response_id` to refer to. */
export const responseStored: PrefixEffectReader = (response, _path, now) => {
  if (typeof response.id !== "string" || response.store === false) return undefined;
  return { kind: "response-stored", id: response.id, outputChars: outputChars(response), expiresAt: now + storedFor };
};

/** The complete response a Responses stream carries in its `response.completed` event. */
export function completedResponseOf(event: JsonObject): JsonObject | undefined {
  return event.type === "response.completed" && isObject(event.response) ? event.response : undefined;
}
