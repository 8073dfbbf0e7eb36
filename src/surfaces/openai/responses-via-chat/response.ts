/*
 * A translated `chat.completion` as the Responses `response` for the whole answer: a message item
 * for its text (or refusal), then one `function_call` item per tool call.
 */

import type { ResponseOutputItem } from "openai/resources/responses/responses";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import {
  itemId,
  numberOr,
  type Outcome,
  outcomeOf,
  refusalPart,
  responseOf,
  seconds,
  stringOr,
  textPart,
  usageOf,
} from "./response-object.js";

/** Marks the last output item incomplete when the response is: that is where the answer was cut. */
function markCut(output: ResponseOutputItem[], outcome: Outcome): ResponseOutputItem[] {
  const last = output.at(-1);
  if (outcome.status !== "incomplete" || (last?.type !== "message" && last?.type !== "function_call")) return output;
  return [...output.slice(0, -1), { ...last, status: "incomplete" }];
}

/**
 * The Responses `response` for a translated `chat.completion` of a request (`request`, the Responses
 * body): a message item for its text (or refusal), then one `function_call` item per tool call.
 */
export function chatToResponse(
  completion: JsonObject,
  request: JsonObject,
  id: string,
  clock: () => number = Date.now,
): JsonObject {
  const now = seconds(clock);
  const choice = (Array.isArray(completion.choices) ? completion.choices : []).find(isObject) ?? {};
  const message = isObject(choice.message) ? choice.message : {};
  const outcome = outcomeOf(choice.finish_reason);
  const output: ResponseOutputItem[] = [];
  const content = [
    ...(typeof message.content === "string" && message.content !== "" ? [textPart(message.content)] : []),
    ...(typeof message.refusal === "string" && message.refusal !== "" ? [refusalPart(message.refusal)] : []),
  ];
  if (content.length > 0) {
    output.push({ id: itemId("msg", id, 0), type: "message", status: "completed", role: "assistant", content });
  }
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    output.push({
      type: "function_call",
      id: itemId("fc", id, output.length),
      call_id: String(call.id),
      name: String(call.function.name),
      arguments: stringOr(call.function.arguments, ""),
      status: "completed",
    });
  }
  const response = responseOf(request, {
    ...outcome,
    id,
    createdAt: numberOr(completion.created, now),
    completedAt: now,
    model: stringOr(completion.model, String(request.model)),
    output: markCut(output, outcome),
    usage: usageOf(completion.usage),
  });
  return { ...response };
}
