import type { JsonObject } from "../../json/json-object.js";
import type { TokenCountRequest } from "../surface.js";
import { tokenCountRequest } from "../token-count.js";

/** The members `POST /responses/input_tokens` takes. */
const countable = new Set([
  "conversation",
  "input",
  "instructions",
  "model",
  "parallel_tool_calls",
  "previous_response_id",
  "reasoning",
  "text",
  "tool_choice",
  "tools",
  "truncation",
]);

/**
 * OpenAI's own count of a Responses call: the body without what input_tokens does not take. A
 * stored prompt template is not counted there, so a call with one cannot be estimated.
 */
export function responsesTokenCount(body: JsonObject): TokenCountRequest | undefined {
  if (body.prompt !== undefined && body.prompt !== null) return undefined;
  return tokenCountRequest("/responses/input_tokens", body, "input_tokens", countable);
}
