import { invalidRequest } from "../../../errors/gateway-error.js";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import type { TranslationContext } from "../../translation.js";
import { asArray, asObject, asString } from "../../wire-fields.js";
import { isSet } from "./is-set.js";
import { contentParts, hasText, textPart, unsupportedPart, userParts } from "./parts.js";
import { refuseMessageMembers } from "./refusals.js";

/**
 * Chat Completions messages as Gemini `systemInstruction` parts and `contents`: system and
 * developer messages become the system instruction, user messages user turns, assistant messages
 * model turns (their tool calls function calls) and tool messages function responses.
 */

/**
 * Marks the first function call of each replayed model turn. Gemini 3 refuses a history whose function
 * calls lack the thought signature it issued, and Chat Completions has nowhere to keep one; Google
 * documents this value for function calls that did not come from the model with their signature.
 */
const unsignedFunctionCall = "skip_thought_signature_validator";

/** Gemini contents built turn by turn; consecutive turns of one role become one content. */
class ContentList {
  readonly contents: JsonObject[] = [];

  add(role: "user" | "model", parts: JsonObject[]): void {
    if (parts.length === 0) return;
    const last = this.contents.at(-1);
    if (last !== undefined && last.role === role) (last.parts as JsonObject[]).push(...parts);
    else this.contents.push({ role, parts });
  }
}

/** Messages to `systemInstruction` parts and `contents`. */
export function translateMessages(
  messages: unknown[],
  context: TranslationContext,
): { systemParts: JsonObject[]; contents: JsonObject[] } {
  const systemParts: JsonObject[] = [];
  const list = new ContentList();
  /** Function names by tool call id, from the assistant turns read so far. */
  const toolCallNames = new Map<string, string>();
  messages.forEach((value, i) => {
    const path = `messages[${i}]`;
    const message = asObject(value, path);
    const role = asString(message.role, `${path}.role`);
    refuseMessageMembers(message, role, path, context.droppable);
    switch (role) {
      case "system":
      case "developer":
        systemParts.push(
          ...contentParts(message.content, `${path}.content`)
            .map(([part, at]) => textPart(part, at))
            .filter(hasText),
        );
        break;
      case "user":
        list.add("user", userParts(message.content, `${path}.content`));
        break;
      case "assistant":
        list.add("model", modelParts(message, path, toolCallNames));
        break;
      case "tool":
        list.add("user", [functionResponse(message, path, toolCallNames)]);
        break;
      case "function":
        throw invalidRequest(
          `'${path}.role' "function" (legacy function calling) is not translated to Gemini; send tool messages answering tool_calls instead.`,
          `${path}.role`,
        );
      default:
        throw invalidRequest(`'${path}.role' must be system, developer, user, assistant or tool.`, `${path}.role`);
    }
  });
  return { systemParts, contents: list.contents };
}

/** An assistant message's parts: its text (and refusal) as model text, its tool calls as function calls. */
function modelParts(message: JsonObject, path: string, toolCallNames: Map<string, string>): JsonObject[] {
  const parts = contentParts(message.content, `${path}.content`).map(([part, at]) => {
    if (part.type === "refusal") return { text: asString(part.refusal, `${at}.refusal`) };
    if (part.type !== "text") throw unsupportedPart(at, '"text" or "refusal"');
    return textPart(part, at);
  });
  if (isSet(message.refusal)) parts.push({ text: asString(message.refusal, `${path}.refusal`) });
  const calls = isSet(message.tool_calls) ? asArray(message.tool_calls, `${path}.tool_calls`) : [];
  calls.forEach((value, k) => {
    const at = `${path}.tool_calls[${k}]`;
    const call = asObject(value, at);
    if (call.type !== undefined && call.type !== "function") {
      throw invalidRequest(
        `'${at}.type' must be "function"; custom tool calls are not translated to Gemini.`,
        `${at}.type`,
      );
    }
    const id = asString(call.id, `${at}.id`);
    const fn = asObject(call.function, `${at}.function`);
    const name = asString(fn.name, `${at}.function.name`);
    const args = parseArguments(asString(fn.arguments, `${at}.function.arguments`), `${at}.function.arguments`);
    toolCallNames.set(id, name);
    const functionCall: JsonObject = { functionCall: { name, args } };
    if (k === 0) functionCall.thoughtSignature = unsignedFunctionCall;
    parts.push(functionCall);
  });
  return parts.filter(hasText);
}

/** Tool call arguments as the JSON object Gemini's `args` is; an empty string is no arguments. */
function parseArguments(text: string, path: string): JsonObject {
  if (text.trim() === "") return {};
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    throw invalidRequest(`'${path}' must be a JSON object in text; it is not valid JSON.`, path);
  }
  if (!isObject(args)) throw invalidRequest(`'${path}' must be a JSON object in text.`, path);
  return args;
}

/** A tool message as a `functionResponse`, named after the assistant tool call it answers. */
function functionResponse(message: JsonObject, path: string, toolCallNames: Map<string, string>): JsonObject {
  const id = asString(message.tool_call_id, `${path}.tool_call_id`);
  const name = toolCallNames.get(id);
  if (name === undefined) {
    throw invalidRequest(
      `'${path}.tool_call_id' answers no tool call of an earlier assistant message; Gemini needs the call's function name.`,
      `${path}.tool_call_id`,
    );
  }
  const text = contentParts(message.content, `${path}.content`)
    .map(([part, at]) => textPart(part, at).text as string)
    .join("");
  return { functionResponse: { name, response: jsonObjectOf(text) ?? { content: text } } };
}

/** The JSON object a text holds, if it holds one. */
function jsonObjectOf(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
