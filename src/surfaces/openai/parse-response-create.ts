import { emptyCall, type LogicalCall } from "../../logical-call.js";
import {
  asArray,
  asObject,
  asString,
  type JsonObject,
  optionalArray,
  optionalFlag,
  optionalObject,
  optionalString,
  textOf,
} from "../wire-fields.js";

const systemRoles = new Set(["system", "developer"]);
const textParts = new Map([
  ["input_text", "text"],
  ["output_text", "text"],
  ["reasoning_text", "text"],
  ["summary_text", "text"],
  ["refusal", "refusal"],
]);
const mediaParts = new Set(["input_image", "input_file", "input_audio"]);

/** Parses a Responses API create body into its logical call. */
export function parseResponseCreate(body: JsonObject): LogicalCall {
  const call = emptyCall();
  call.model = optionalString(body.model, "model");
  call.stream = optionalFlag(body.stream, "stream");
  const instructions = body.instructions;
  if (typeof instructions === "string") call.system.push(instructions);
  else readItems(call, optionalArray(instructions, "instructions") ?? [], "instructions", call.system);
  if (typeof body.input === "string") call.messages.push(body.input);
  else readItems(call, optionalArray(body.input, "input") ?? [], "input", call.messages);
  call.tools.push(...(optionalArray(body.tools, "tools") ?? []));
  const format = optionalObject(optionalObject(body.text, "text")?.format, "text.format");
  if (format?.type === "json_schema") call.responseSchema = optionalObject(format.schema, "text.format.schema");
  const previous = optionalString(body.previous_response_id, "previous_response_id");
  if (previous !== undefined) call.cachedPrefix = { kind: "previous-response", id: previous };
  const conversation = body.conversation;
  if (conversation !== undefined && conversation !== null) {
    const id =
      typeof conversation === "string"
        ? conversation
        : asString(asObject(conversation, "conversation").id, "conversation.id");
    call.cachedPrefix = { kind: "conversation", id };
  }
  readPromptVariables(call, optionalObject(body.prompt, "prompt"));
  return call;
}

function readItems(call: LogicalCall, items: unknown[], path: string, defaultTexts: string[]): void {
  items.forEach((value, index) => {
    const itemPath = `${path}[${index}]`;
    const item = asObject(value, itemPath);
    const type = optionalString(item.type, `${itemPath}.type`) ?? "message";
    if (type === "message") readMessage(call, item, itemPath, defaultTexts);
    else if (type === "function_call" || type === "custom_tool_call") {
      call.messages.push(asString(item.name, `${itemPath}.name`), textOf(item.arguments ?? item.input ?? ""));
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      readContent(call, item.output, `${itemPath}.output`, call.messages);
    } else if (type === "reasoning") {
      for (const member of ["summary", "content"]) {
        const parts = optionalArray(item[member], `${itemPath}.${member}`);
        if (parts !== undefined) readContent(call, parts, `${itemPath}.${member}`, call.messages);
      }
    } else call.messages.push(textOf(item));
  });
}

function readMessage(call: LogicalCall, item: JsonObject, path: string, defaultTexts: string[]): void {
  const role = asString(item.role, `${path}.role`);
  const texts = systemRoles.has(role) ? call.system : defaultTexts;
  readContent(call, item.content, `${path}.content`, texts);
}

function readContent(call: LogicalCall, content: unknown, path: string, texts: string[]): void {
  if (typeof content === "string") {
    texts.push(content);
    return;
  }
  asArray(content, path).forEach((value, index) => {
    const partPath = `${path}[${index}]`;
    const part = asObject(value, partPath);
    const type = asString(part.type, `${partPath}.type`);
    const textField = textParts.get(type);
    if (textField !== undefined) texts.push(asString(part[textField], `${partPath}.${textField}`));
    else if (mediaParts.has(type)) call.mediaParts++;
    else texts.push(textOf(part));
  });
}

/** A stored prompt template's variables are text the model sees (the template itself is stored upstream). */
function readPromptVariables(call: LogicalCall, prompt: JsonObject | undefined): void {
  const variables = optionalObject(prompt?.variables, "prompt.variables");
  if (variables === undefined) return;
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value === "string") call.messages.push(value);
    else readContent(call, [value], `prompt.variables.${name}`, call.messages);
  }
}
