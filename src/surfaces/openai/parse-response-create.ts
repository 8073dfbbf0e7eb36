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
const textParts: Record<string, string> = { input_text: "text", output_text: "text", refusal: "refusal" };
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
      for (const summary of optionalArray(item.summary, `${itemPath}.summary`) ?? []) {
        call.messages.push(textOf(asObject(summary, `${itemPath}.summary`).text ?? ""));
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
    const textField = textParts[type];
    if (textField !== undefined) texts.push(asString(part[textField], `${partPath}.${textField}`));
    else if (mediaParts.has(type)) call.mediaParts++;
    else texts.push(textOf(part));
  });
}
