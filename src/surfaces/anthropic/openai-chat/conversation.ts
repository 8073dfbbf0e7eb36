/**
 * Chat Completions messages as an Anthropic conversation: system and developer messages become the
 * system blocks; user, assistant (with tool calls) and tool messages become alternating turns.
 */

import { invalidRequest } from "../../../errors/gateway-error.js";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import type { TranslationContext } from "../../translation.js";
import { asObject, asString, optionalArray, optionalString } from "../../wire-fields.js";
import { assistantKinds, contentBlocks, textKinds, userKinds } from "./content.js";
import { noCounterpart } from "./no-counterpart.js";

/** The members each message role may carry (`role` and `name` aside); any other has no counterpart. */
const messageMembers: Record<string, ReadonlySet<string>> = {
  system: new Set(["content"]),
  developer: new Set(["content"]),
  user: new Set(["content"]),
  assistant: new Set(["content", "refusal", "tool_calls"]),
  tool: new Set(["content", "tool_call_id"]),
};

/** One Anthropic message being built; consecutive messages of one role merge into it. */
interface Turn {
  role: "user" | "assistant";
  content: JsonObject[];
}

/** What the messages become: the system blocks and the alternating turns. */
interface Conversation {
  system: JsonObject[];
  turns: Turn[];
}

/** An assistant message's tool calls as `tool_use` blocks; the arguments must be a JSON object in text. */
function toolUseBlocks(toolCalls: unknown, path: string): JsonObject[] {
  return (optionalArray(toolCalls, `${path}.tool_calls`) ?? []).map((value, index) => {
    const callPath = `${path}.tool_calls[${index}]`;
    const call = asObject(value, callPath);
    if (call.type != null && call.type !== "function") throw noCounterpart(`${callPath}.type`);
    const fn = asObject(call.function, `${callPath}.function`);
    const argumentsPath = `${callPath}.function.arguments`;
    const text = asString(fn.arguments, argumentsPath);
    let input: unknown = {};
    try {
      if (text.trim() !== "") input = JSON.parse(text);
    } catch {
      input = undefined;
    }
    if (!isObject(input)) throw invalidRequest(`'${argumentsPath}' must be a JSON object in text.`, argumentsPath);
    return {
      type: "tool_use",
      id: asString(call.id, `${callPath}.id`),
      name: asString(fn.name, `${callPath}.function.name`),
      input,
    };
  });
}

/** A `tool` message as a `tool_result` block whose content is the message's text. */
function toolResultBlock(message: JsonObject, path: string): JsonObject {
  const parts = contentBlocks(message.content, path, textKinds);
  const block: JsonObject = {
    type: "tool_result",
    tool_use_id: asString(message.tool_call_id, `${path}.tool_call_id`),
    content: parts.map((part) => part.text).join(""),
  };
  return parts.some((part) => part.cache_control !== undefined)
    ? { ...block, cache_control: { type: "ephemeral" } }
    : block;
}

/** Appends blocks as a turn of `role`, merged into the last turn when it has the same role. */
function addTurn(turns: Turn[], role: Turn["role"], content: JsonObject[]): void {
  if (content.length === 0) return;
  const last = turns.at(-1);
  if (last?.role === role) last.content.push(...content);
  else turns.push({ role, content });
}

/** The messages as system blocks and alternating Anthropic turns. */
export function conversationOf(messages: unknown[], context: TranslationContext): Conversation {
  const conversation: Conversation = { system: [], turns: [] };
  messages.forEach((value, index) => {
    const path = `messages[${index}]`;
    const message = asObject(value, path);
    const role = asString(message.role, `${path}.role`);
    if (role === "function") throw noCounterpart(`${path}.role`);
    // Own members only: a role named like a member of every object (`constructor`, `__proto__`) is no role.
    const members = Object.hasOwn(messageMembers, role) ? messageMembers[role] : undefined;
    if (members === undefined) throw invalidRequest(`'${path}.role' is not a known message role.`, `${path}.role`);
    for (const [key, member] of Object.entries(message)) {
      if (member === null || key === "role" || members.has(key)) continue;
      if (key === "name") {
        if (!context.droppable.includes("name")) throw noCounterpart(`${path}.name`, "name");
      } else throw noCounterpart(`${path}.${key}`);
    }
    if (role === "system" || role === "developer") {
      conversation.system.push(...contentBlocks(message.content, path, textKinds));
    } else if (role === "user") {
      addTurn(conversation.turns, "user", contentBlocks(message.content, path, userKinds));
    } else if (role === "assistant") {
      const refusal = optionalString(message.refusal, `${path}.refusal`);
      addTurn(conversation.turns, "assistant", [
        ...contentBlocks(message.content, path, assistantKinds),
        ...(refusal ? [{ type: "text", text: refusal }] : []),
        ...toolUseBlocks(message.tool_calls, path),
      ]);
    } else addTurn(conversation.turns, "user", [toolResultBlock(message, path)]);
  });
  return conversation;
}

/** The system blocks as Anthropic's `system`: a string for one plain text, else the blocks. */
export function systemOf(blocks: JsonObject[]): unknown {
  const only = blocks.length === 1 ? blocks[0] : undefined;
  return only !== undefined && only.cache_control === undefined ? only.text : blocks;
}
