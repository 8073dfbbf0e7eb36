/*
 * A Responses request's `instructions` and `input` items as Chat Completions messages: message
 * items by role, function calls as the assistant's tool calls, their outputs as `tool` messages.
 * Reasoning items are left out; what has no counterpart is refused.
 */

import { invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import { asArray, asObject, asString, optionalArray, optionalString } from "../../wire-fields.js";
import { onlyMembers, untranslatable } from "./refusal.js";

/** `prompt_cache_breakpoint` as it is: Chat Completions parts take the same member. */
function breakpointOf(part: JsonObject): JsonObject {
  return part.prompt_cache_breakpoint == null ? {} : { prompt_cache_breakpoint: part.prompt_cache_breakpoint };
}

/** The part types each message role may carry, as Chat Completions allows them. */
const roleParts = new Map<string, ReadonlySet<string>>([
  ["system", new Set(["input_text", "output_text"])],
  ["developer", new Set(["input_text", "output_text"])],
  ["user", new Set(["input_text", "output_text", "input_image", "input_file"])],
  ["assistant", new Set(["input_text", "output_text", "refusal"])],
]);

/** One content part as a Chat Completions part; a stored file (`file_id`, `file_url`) has no counterpart. */
function partOf(part: JsonObject, path: string): JsonObject {
  switch (part.type) {
    case "input_text":
      onlyMembers(part, ["type", "text", "prompt_cache_breakpoint"], path);
      return { type: "text", text: asString(part.text, `${path}.text`), ...breakpointOf(part) };
    case "output_text":
      // A replayed answer's annotations and logprobs describe it; the model reads only the text.
      onlyMembers(part, ["type", "text", "annotations", "logprobs"], path);
      return { type: "text", text: asString(part.text, `${path}.text`) };
    case "refusal":
      onlyMembers(part, ["type", "refusal"], path);
      return { type: "refusal", refusal: asString(part.refusal, `${path}.refusal`) };
    case "input_image": {
      onlyMembers(part, ["type", "image_url", "file_id", "detail", "prompt_cache_breakpoint"], path);
      if (part.file_id != null) throw untranslatable(`${path}.file_id`);
      const url = asString(part.image_url, `${path}.image_url`);
      const detail = optionalString(part.detail, `${path}.detail`);
      return {
        type: "image_url",
        image_url: { url, ...(detail === undefined ? {} : { detail }) },
        ...breakpointOf(part),
      };
    }
    default: {
      // `input_file`: the one kind left that a role may carry.
      onlyMembers(part, ["type", "file_data", "filename", "file_id", "file_url", "prompt_cache_breakpoint"], path);
      if (part.file_id != null) throw untranslatable(`${path}.file_id`);
      if (part.file_url != null) throw untranslatable(`${path}.file_url`);
      const fileData = asString(part.file_data, `${path}.file_data`);
      const filename = optionalString(part.filename, `${path}.filename`);
      const file = { file_data: fileData, ...(filename === undefined ? {} : { filename }) };
      return { type: "file", file, ...breakpointOf(part) };
    }
  }
}

/** A message item (typed or not) as a Chat Completions message of the same role. */
function messageOf(item: JsonObject, path: string): JsonObject {
  onlyMembers(item, ["type", "role", "content", "id", "status"], path);
  const role = asString(item.role, `${path}.role`);
  const kinds = roleParts.get(role);
  if (kinds === undefined) throw invalidRequest(`'${path}.role' is not a known message role.`, `${path}.role`);
  if (typeof item.content === "string") return { role, content: item.content };
  const content = asArray(item.content, `${path}.content`).map((value, index) => {
    const partPath = `${path}.content[${index}]`;
    const part = asObject(value, partPath);
    if (typeof part.type !== "string" || !kinds.has(part.type)) throw untranslatable(`${partPath}.type`);
    return partOf(part, partPath);
  });
  return { role, content };
}

/**
 * A `function_call` item as a tool call of an assistant message: of the message just before when it
 * is the assistant's (consecutive calls, or a text answer and its calls, are one Chat Completions turn).
 */
function addToolCall(messages: JsonObject[], item: JsonObject, path: string): void {
  onlyMembers(item, ["type", "call_id", "name", "arguments", "id", "status"], path);
  const call = {
    id: asString(item.call_id, `${path}.call_id`),
    type: "function",
    function: { name: asString(item.name, `${path}.name`), arguments: asString(item.arguments, `${path}.arguments`) },
  };
  const last = messages.at(-1);
  if (last?.role !== "assistant") {
    messages.push({ role: "assistant", tool_calls: [call] });
    return;
  }
  last.tool_calls = [...(Array.isArray(last.tool_calls) ? last.tool_calls : []), call];
}

/** A `function_call_output` item as a `tool` message; an output of parts becomes their joined text. */
function toolMessageOf(item: JsonObject, path: string): JsonObject {
  onlyMembers(item, ["type", "call_id", "output", "id", "status"], path);
  const toolCallId = asString(item.call_id, `${path}.call_id`);
  if (typeof item.output === "string") return { role: "tool", tool_call_id: toolCallId, content: item.output };
  const texts = asArray(item.output, `${path}.output`).map((value, index) => {
    const partPath = `${path}.output[${index}]`;
    const part = asObject(value, partPath);
    if (part.type !== "input_text" && part.type !== "output_text") throw untranslatable(`${partPath}.type`);
    return asString(part.text, `${partPath}.text`);
  });
  return { role: "tool", tool_call_id: toolCallId, content: texts.join("") };
}

/** Adds what one input item becomes; reasoning items carry no text another provider can read and are left out. */
function addItem(messages: JsonObject[], value: unknown, path: string): void {
  const item = asObject(value, path);
  // An untyped item is a message, or an item reference when it has an id and no role.
  if (item.type == null && item.role == null && item.id != null) throw untranslatable(`${path}.id`);
  switch (item.type ?? "message") {
    case "message":
      messages.push(messageOf(item, path));
      return;
    case "function_call":
      addToolCall(messages, item, path);
      return;
    case "function_call_output":
      messages.push(toolMessageOf(item, path));
      return;
    case "reasoning":
      return;
    default:
      throw untranslatable(`${path}.type`);
  }
}

/** `instructions` as the first system message, then the input. */
export function messagesOf(body: JsonObject): JsonObject[] {
  const messages: JsonObject[] = [];
  const instructions = optionalString(body.instructions, "instructions");
  if (instructions !== undefined) messages.push({ role: "system", content: instructions });
  if (typeof body.input === "string") messages.push({ role: "user", content: body.input });
  else {
    const items = optionalArray(body.input, "input") ?? [];
    for (const [index, item] of items.entries()) addItem(messages, item, `input[${index}]`);
  }
  return messages;
}
