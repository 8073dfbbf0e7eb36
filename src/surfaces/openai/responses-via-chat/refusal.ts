/*
 * The refusal of what a Responses request asks that the Chat Completions route cannot carry:
 * INVALID_REQUEST naming the member by its path, with a fixed reason where there is one.
 */

import { type GatewayError, invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";

/** Why some members cannot be translated, for the refusal's message (fixed text, no request content). */
const reasons = new Map([
  ["previous_response_id", "a response OpenAI keeps cannot be continued at another provider"],
  ["conversation", "the gateway keeps no conversations for such models"],
  ["background", "it is answered while the client waits"],
  ["prompt", "stored prompt templates live at OpenAI"],
  ["truncation", "only 'disabled' is possible"],
  ["include", "it asks for output such a model does not give"],
]);

/** The refusal of a member, by its path, that the Chat Completions route cannot carry. */
export function untranslatable(path: string): GatewayError {
  const reason = reasons.get(path);
  return invalidRequest(
    `'${path}' cannot be translated for a model routed to another provider${reason === undefined ? "" : ` (${reason})`}; nothing was sent.`,
    path,
  );
}

/** Refuses every member of `value` outside `known` that is set (not null). */
export function onlyMembers(value: JsonObject, known: readonly string[], path: string): void {
  for (const [name, member] of Object.entries(value)) {
    if (member !== undefined && member !== null && !known.includes(name)) throw untranslatable(`${path}.${name}`);
  }
}
