import { isObject, type JsonObject } from "../../json/json-object.js";
import type { SessionRoute } from "../surface.js";

/** A Responses `input` as a list of items: a text input is one user message. */
function inputItems(input: unknown): unknown[] {
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  return Array.isArray(input) ? input : [];
}

/**
 * Follow-up sessions on the Responses API: `previous_response_id` names the response continued; a turn's items
 * are its input items, then the response's `output`, which the API itself accepts back as input.
 */
export const responsesSessions: SessionRoute = {
  previousOf: (body) => (typeof body.previous_response_id === "string" ? body.previous_response_id : undefined),
  conversationOf: (body) => body.conversation !== undefined && body.conversation !== null,
  stores: (body) => body.store !== false,
  withSettings(body, settings) {
    const sent: JsonObject = { ...body };
    if (sent.model === undefined && settings.model !== undefined) sent.model = settings.model;
    const reasoning = isObject(body.reasoning) ? body.reasoning : undefined;
    if (settings.reasoning !== undefined && (reasoning?.effort === undefined || reasoning.effort === null)) {
      sent.reasoning = { ...reasoning, effort: settings.reasoning };
    }
    return sent;
  },
  withPrevious: (body, id) => ({ ...body, previous_response_id: id }),
  withHistory(body, history) {
    const { previous_response_id: _continued, ...rest } = body;
    return { ...rest, input: [...history, ...inputItems(body.input)] };
  },
  turnItems: (body, answer) => [...inputItems(body.input), ...(Array.isArray(answer.output) ? answer.output : [])],
};
