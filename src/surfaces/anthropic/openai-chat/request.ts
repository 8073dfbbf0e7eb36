/**
 * A Chat Completions body as an Anthropic Messages request: the conversation, tools, sampling,
 * stop sequences, reasoning level (as a thinking budget) and response format; every member without
 * a counterpart is refused unless the policy lets it be dropped.
 */

import { invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import type { ReasoningLevel, TranslationContext } from "../../translation.js";
import { asArray, asObject, asString, optionalArray, optionalObject, optionalString } from "../../wire-fields.js";
import { conversationOf, systemOf } from "./conversation.js";
import { noCounterpart } from "./no-counterpart.js";
import { toolChoiceOf, toolsOf } from "./tools.js";

/** `max_tokens` when the client sets none: Anthropic requires one, Chat Completions does not. */
export const defaultAnthropicMaxTokens = 4096;

/**
 * The thinking budget of each reasoning level: `none` turns thinking off (no budget); every other
 * level turns it on with this many tokens.
 */
export const anthropicThinkingBudgets: Record<ReasoningLevel, number | undefined> = {
  none: undefined,
  low: 1024,
  medium: 4096,
  high: 16000,
  xhigh: 32000,
  max: 64000,
};

/** Top-level members read below, or consumed without a counterpart (their absence changes nothing a client relies on). */
const handled = new Set([
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "stop",
  "user",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "model",
  "stream",
  "stream_options",
  "store",
  "metadata",
  "safety_identifier",
  "prompt_cache_key",
  "service_tier",
  "reasoning_effort",
]);

/** Members without a counterpart that ask for nothing at these values (their defaults): not refused. */
const neutralValues: Record<string, unknown> = { n: 1, logprobs: false, presence_penalty: 0, frequency_penalty: 0 };

/** `response_format` as Anthropic's native response schema (`output_config.format`); undefined for text. */
function outputConfigOf(body: JsonObject, context: TranslationContext): JsonObject | undefined {
  const format = optionalObject(body.response_format, "response_format");
  if (format === undefined || format.type === "text") return undefined;
  if (format.type === "json_schema") {
    const jsonSchema = asObject(format.json_schema, "response_format.json_schema");
    const schema = asObject(jsonSchema.schema, "response_format.json_schema.schema");
    return { format: { type: "json_schema", schema } };
  }
  if (format.type === "json_object") {
    if (context.droppable.includes("response_format")) return undefined;
    throw invalidRequest(
      "'response_format' of type 'json_object' has no counterpart in the Anthropic Messages API (it takes a JSON schema only); send a 'json_schema' format, remove it, or list 'response_format' under the policy's droppable parameters. Nothing was sent.",
      "response_format",
    );
  }
  throw invalidRequest(
    "'response_format.type' must be 'text', 'json_object' or 'json_schema'.",
    "response_format.type",
  );
}

/** A numeric parameter, or undefined when absent. */
function optionalNumber(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw invalidRequest(`'${path}' must be a number.`, path);
  return value;
}

/** The sampling parameters; thinking allows neither a temperature other than 1 nor a `top_p` other than 1. */
function samplingOf(body: JsonObject, thinking: boolean): JsonObject {
  const temperature = optionalNumber(body.temperature, "temperature");
  const topP = optionalNumber(body.top_p, "top_p");
  if (temperature !== undefined && temperature > 1) {
    throw invalidRequest(
      "'temperature' above 1 has no counterpart in the Anthropic Messages API (its range is 0 to 1); lower it. Nothing was sent.",
      "temperature",
    );
  }
  for (const [name, value] of [
    ["temperature", temperature],
    ["top_p", topP],
  ] as const) {
    if (thinking && value !== undefined && value !== 1) {
      throw invalidRequest(
        `'${name}' is not allowed by Anthropic while thinking is on; remove it or lower the reasoning level. Nothing was sent.`,
        name,
      );
    }
  }
  return {
    ...(temperature === undefined ? {} : { temperature }),
    ...(topP === undefined ? {} : { top_p: topP }),
  };
}

/** Refuses every top-level member this translation neither reads nor may drop. */
function refuseUnhandled(body: JsonObject, context: TranslationContext): void {
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null || handled.has(name)) continue;
    if (name in neutralValues && neutralValues[name] === value) continue;
    if (!context.droppable.includes(name)) throw noCounterpart(name, name);
  }
}

/** The Chat Completions body as a Messages request. */
export function request(body: JsonObject, context: TranslationContext): { path: string; body: JsonObject } {
  refuseUnhandled(body, context);
  const level = context.reasoning;
  const budget = level === undefined ? undefined : anthropicThinkingBudgets[level];
  const thinking = budget !== undefined;
  const conversation = conversationOf(asArray(body.messages, "messages"), context);
  const clientMax =
    optionalNumber(body.max_completion_tokens, "max_completion_tokens") ??
    optionalNumber(body.max_tokens, "max_tokens");
  if (clientMax !== undefined && (!Number.isInteger(clientMax) || clientMax < 1)) {
    const param =
      body.max_completion_tokens === undefined || body.max_completion_tokens === null
        ? "max_tokens"
        : "max_completion_tokens";
    throw invalidRequest(`'${param}' must be a whole number of at least 1. Nothing was sent.`, param);
  }
  let maxTokens = clientMax ?? defaultAnthropicMaxTokens;
  if (budget !== undefined && maxTokens <= budget) maxTokens = budget + maxTokens;
  const stop = body.stop;
  const stopSequences =
    typeof stop === "string"
      ? [stop]
      : optionalArray(stop, "stop")?.map((item, index) => asString(item, `stop[${index}]`));
  const user = optionalString(body.user, "user");
  const tools = optionalArray(body.tools, "tools");
  const toolChoice = toolChoiceOf(body, thinking);
  const outputConfig = outputConfigOf(body, context);
  const native: JsonObject = {
    model: context.upstreamModel,
    max_tokens: maxTokens,
    ...(conversation.system.length === 0 ? {} : { system: systemOf(conversation.system) }),
    messages: conversation.turns,
    ...(tools === undefined ? {} : { tools: toolsOf(tools) }),
    ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
    ...samplingOf(body, thinking),
    ...(stopSequences === undefined || stopSequences.length === 0 ? {} : { stop_sequences: stopSequences }),
    ...(user === undefined ? {} : { metadata: { user_id: user } }),
    ...(level === undefined
      ? {}
      : { thinking: thinking ? { type: "enabled", budget_tokens: budget } : { type: "disabled" } }),
    ...(outputConfig === undefined ? {} : { output_config: outputConfig }),
    ...(body.stream === true ? { stream: true } : {}),
  };
  return { path: "/v1/messages", body: native };
}
