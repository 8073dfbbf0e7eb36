import { type GatewayError, invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import { isSet } from "./is-set.js";

/**
 * Which Chat Completions members the Gemini translation takes, and the refusal of the others: a
 * request member or message member without a Gemini counterpart is refused unless the policy lets
 * it be dropped (translation.droppable); nothing is sent then.
 */

/** Chat Completions members the translation below carries into the Gemini request. */
const translatedMembers = new Set([
  "messages",
  "tools",
  "tool_choice",
  "response_format",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "stop",
  "n",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "logprobs",
  "top_logprobs",
]);

/** Members without a Gemini counterpart that do not change the answer: consumed without a word. */
const consumedMembers = new Set([
  "model",
  "stream",
  "stream_options",
  "user",
  "metadata",
  "store",
  "safety_identifier",
  "prompt_cache_key",
  "service_tier",
  "reasoning_effort",
]);

/**
 * Members whose one value is what Gemini does anyway: `parallel_tool_calls: true` (Gemini may call several tools
 * in one turn and cannot be told not to, so `false` has no counterpart).
 */
const neutralValues: Readonly<Record<string, unknown>> = { parallel_tool_calls: true };

/** The refusal for a parameter Gemini has no counterpart for; it names the parameter and the ways out. */
function noCounterpart(param: string, droppableName = param): GatewayError {
  return invalidRequest(
    `'${param}' has no counterpart in the Gemini API; remove it, or list '${droppableName}' under the policy's ` +
      "droppable parameters (translation.droppable) to have it dropped. Nothing was sent.",
    param,
  );
}

/** Refuses every set top-level member that is neither translated, consumed nor droppable. */
export function refuseWithoutCounterpart(body: JsonObject, droppable: readonly string[]): void {
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (translatedMembers.has(name) || consumedMembers.has(name) || droppable.includes(name)) continue;
    if (name in neutralValues && neutralValues[name] === value) continue;
    throw noCounterpart(name);
  }
}

/** The message members each role may carry (besides `role`); others only when droppable by their name. */
const messageMembers = new Map<string, readonly string[]>([
  ["system", ["content"]],
  ["developer", ["content"]],
  ["user", ["content"]],
  ["assistant", ["content", "refusal", "tool_calls"]],
  ["tool", ["content", "tool_call_id", "name"]],
]);

/**
 * Refuses message members without a Gemini counterpart (`name`, `audio`, unknown ones) unless the
 * policy lets their name be dropped; legacy `function_call` is refused always.
 */
export function refuseMessageMembers(
  message: JsonObject,
  role: string,
  path: string,
  droppable: readonly string[],
): void {
  const allowed = messageMembers.get(role);
  if (allowed === undefined) return;
  for (const [name, value] of Object.entries(message)) {
    if (name === "role" || !isSet(value) || allowed.includes(name)) continue;
    if (name === "function_call") {
      throw invalidRequest(
        `'${path}.function_call' (legacy function calling) is not translated to Gemini; send tool_calls instead.`,
        `${path}.function_call`,
      );
    }
    if (!droppable.includes(name)) throw noCounterpart(`${path}.${name}`, name);
  }
}
