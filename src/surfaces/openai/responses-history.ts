import { isObject, type JsonObject } from "../../json/json-object.js";
import { compactJsonCodePoints } from "../../window/code-points.js";
import { countCall } from "../../window/prompt-size.js";
import type { PrefixEffectReader } from "../surface.js";
import { parseResponseCreate } from "./response-create-body.js";

/** How long OpenAI keeps a stored response by default: 30 days. */
const storedFor = 30 * 24 * 60 * 60 * 1000;

/**
 * The characters of a response's output that a follow-up turn carries: every output item, read by the rules of an
 * input item (texts as text, reasoning and its encrypted content, tool calls and their arguments, ids, annotations,
 * members the surface does not know as their compact JSON), since the provider puts each before the next turn as
 * such. An item those rules refuse counts whole, as its compact JSON.
 */
export function outputChars(response: JsonObject): number {
  let chars = 0;
  for (const item of Array.isArray(response.output) ? response.output : []) {
    try {
      const counts = countCall(parseResponseCreate({ input: [item] }));
      chars += counts.system + counts.messages + counts.tools + counts.other + counts.schemaTexts + counts.inline;
    } catch {
      chars += compactJsonCodePoints(item);
    }
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
