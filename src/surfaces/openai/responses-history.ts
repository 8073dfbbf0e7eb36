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

/** The statuses of a response still running (a background one): its output is not known yet. */
const running = new Set(["queued", "in_progress"]);

/** The statuses of a response that has ended: its output does not change any more. */
const ended = new Set(["completed", "incomplete", "failed", "cancelled"]);

/** The stream events that carry a response as it ended. */
const finalEvents = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** The id of `/responses/{id}` or `/responses/{id}/…`, a route path the surface matched. */
export function responseIdOf(path: string): string {
  return path.split("/")[2] ?? "";
}

/**
 * A stored Responses answer leaves its history for `previous_response_id` to refer to; a
 * background one, answered while still running, without its output, which is not known yet.
 */
export const responseStored: PrefixEffectReader = (response, _path, now) => {
  if (typeof response.id !== "string" || response.store === false) return undefined;
  const outputKnown = typeof response.status !== "string" || !running.has(response.status);
  return {
    kind: "response-stored",
    id: response.id,
    outputChars: outputKnown ? outputChars(response) : undefined,
    expiresAt: now + storedFor,
  };
};

/**
 * A stored response seen ended, by `GET /responses/{id}` or `POST /responses/{id}/cancel`
 * (whose answer is the response, cancelled or ended before): its output is known from now on.
 */
export const responseEnded: PrefixEffectReader = (response, path) => {
  const id = responseIdOf(path);
  if (response.id !== id || typeof response.status !== "string" || !ended.has(response.status)) return undefined;
  return { kind: "response-ended", id, outputChars: outputChars(response) };
};

/** A successful `DELETE /responses/{id}`: the provider holds that history no more. */
export const responseDeleted: PrefixEffectReader = (_response, path) => ({
  kind: "response-deleted",
  id: responseIdOf(path),
});

/** The response a Responses stream carries in its final event, as it ended. */
export function finalResponseOf(event: JsonObject): JsonObject | undefined {
  return typeof event.type === "string" && finalEvents.has(event.type) && isObject(event.response)
    ? event.response
    : undefined;
}
