/*
 * A Responses create body as a Chat Completions request: the members carried (renamed or
 * reshaped where needed), those consumed without a counterpart, and INVALID_REQUEST naming the
 * first member that cannot be carried, before anything is sent.
 */

import type { JsonObject } from "../../../json/json-object.js";
import { asObject, asString, optionalArray, optionalObject, optionalString } from "../../wire-fields.js";
import { onlyMembers, untranslatable } from "./refusal.js";
import { messagesOf } from "./request-input.js";

/** Top-level Responses members carried into the Chat Completions request, renamed or reshaped where needed. */
export const carriedResponsesMembers = [
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "text",
  "reasoning",
  "max_output_tokens",
  "temperature",
  "top_p",
  "parallel_tool_calls",
  "user",
  "metadata",
  "stream",
] as const;

/**
 * Top-level members consumed without a counterpart, at the values that ask nothing of the provider:
 * `store` (either way: the gateway keeps no such response, so no later turn can name it),
 * `service_tier`, `safety_identifier`, `prompt_cache_key`, `truncation: "disabled"`, an empty
 * `include` and `background: false`.
 */
export const consumedResponsesMembers = [
  "store",
  "service_tier",
  "safety_identifier",
  "prompt_cache_key",
  "truncation",
  "include",
  "background",
] as const;

const carried = new Set<string>(carriedResponsesMembers);

/** Whether a consumed member's value asks nothing that would need the provider's help. */
const consumable = new Map<string, (value: unknown) => boolean>([
  ["store", () => true],
  ["service_tier", () => true],
  ["safety_identifier", () => true],
  ["prompt_cache_key", () => true],
  ["truncation", (value) => value === "disabled"],
  ["include", (value) => Array.isArray(value) && value.length === 0],
  ["background", (value) => value === false],
]);

/** Function tools in Chat Completions' nested shape; built-in tools (web search, file search, …) have none. */
function toolsOf(tools: unknown[]): JsonObject[] {
  return tools.map((value, index) => {
    const path = `tools[${index}]`;
    const tool = asObject(value, path);
    if (tool.type !== "function") throw untranslatable(`${path}.type`);
    onlyMembers(tool, ["type", "name", "description", "parameters", "strict"], path);
    const description = optionalString(tool.description, `${path}.description`);
    const parameters = optionalObject(tool.parameters, `${path}.parameters`);
    const fn = {
      name: asString(tool.name, `${path}.name`),
      ...(description === undefined ? {} : { description }),
      ...(parameters === undefined ? {} : { parameters }),
      ...(typeof tool.strict === "boolean" ? { strict: tool.strict } : {}),
    };
    return { type: "function", function: fn };
  });
}

/** `tool_choice` in Chat Completions' shape: the modes as they are, a named function nested. */
function toolChoiceOf(choice: unknown): unknown {
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  const named = asObject(choice, "tool_choice");
  if (named.type !== "function") throw untranslatable("tool_choice.type");
  onlyMembers(named, ["type", "name"], "tool_choice");
  return { type: "function", function: { name: asString(named.name, "tool_choice.name") } };
}

/** `text.format` as `response_format` and `text.verbosity` as `verbosity`; plain text asks for neither. */
function textOptionsOf(text: JsonObject): JsonObject {
  onlyMembers(text, ["format", "verbosity"], "text");
  const verbosity = text.verbosity == null ? {} : { verbosity: text.verbosity };
  const format = optionalObject(text.format, "text.format");
  if (format === undefined || format.type === "text") return verbosity;
  if (format.type === "json_object") {
    onlyMembers(format, ["type"], "text.format");
    return { response_format: { type: "json_object" }, ...verbosity };
  }
  if (format.type !== "json_schema") throw untranslatable("text.format.type");
  onlyMembers(format, ["type", "name", "description", "schema", "strict"], "text.format");
  const description = optionalString(format.description, "text.format.description");
  const jsonSchema = {
    name: asString(format.name, "text.format.name"),
    ...(description === undefined ? {} : { description }),
    schema: asObject(format.schema, "text.format.schema"),
    ...(typeof format.strict === "boolean" ? { strict: format.strict } : {}),
  };
  return { response_format: { type: "json_schema", json_schema: jsonSchema }, ...verbosity };
}

/** `reasoning.effort` as `reasoning_effort`; the summary setting asks for text another provider does not give. */
function reasoningOf(reasoning: JsonObject): JsonObject {
  onlyMembers(reasoning, ["effort", "summary", "generate_summary"], "reasoning");
  return reasoning.effort == null ? {} : { reasoning_effort: reasoning.effort };
}

/** A member as it is when set, under the Chat Completions name. */
function passed(body: JsonObject, name: string, as = name): JsonObject {
  return body[name] == null ? {} : { [as]: body[name] };
}

/**
 * The Chat Completions request for a Responses create body; INVALID_REQUEST naming the first member
 * (by its path) that cannot be carried, before anything is sent.
 */
export function responsesToChat(body: JsonObject): JsonObject {
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null || carried.has(name)) continue;
    if (!consumable.get(name)?.(value)) throw untranslatable(name);
  }
  const tools = optionalArray(body.tools, "tools");
  const text = optionalObject(body.text, "text");
  const reasoning = optionalObject(body.reasoning, "reasoning");
  return {
    ...passed(body, "model"),
    messages: messagesOf(body),
    ...(tools === undefined ? {} : { tools: toolsOf(tools) }),
    ...(body.tool_choice == null ? {} : { tool_choice: toolChoiceOf(body.tool_choice) }),
    ...passed(body, "parallel_tool_calls"),
    ...(text === undefined ? {} : textOptionsOf(text)),
    ...(reasoning === undefined ? {} : reasoningOf(reasoning)),
    ...passed(body, "max_output_tokens", "max_tokens"),
    ...passed(body, "temperature"),
    ...passed(body, "top_p"),
    ...passed(body, "user"),
    ...passed(body, "metadata"),
    ...passed(body, "stream"),
    ...(body.stream === true ? { stream_options: { include_usage: true } } : {}),
  };
}
