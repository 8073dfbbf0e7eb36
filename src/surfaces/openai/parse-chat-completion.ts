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
const mediaParts = new Set(["image_url", "input_audio", "file"]);

/** Parses a Chat Completions request body into its logical call. */
export function parseChatCompletion(body: JsonObject): LogicalCall {
  const call = emptyCall();
  call.model = optionalString(body.model, "model");
  call.stream = optionalFlag(body.stream, "stream");
  asArray(body.messages, "messages").forEach((value, index) => {
    readMessage(call, asObject(value, `messages[${index}]`), `messages[${index}]`);
  });
  for (const key of ["tools", "functions"]) {
    const tools = optionalArray(body[key], key);
    if (tools) call.tools.push(...tools);
  }
  const responseFormat = optionalObject(body.response_format, "response_format");
  if (responseFormat?.type === "json_schema") {
    const jsonSchema = asObject(responseFormat.json_schema, "response_format.json_schema");
    call.responseSchema = optionalObject(jsonSchema.schema, "response_format.json_schema.schema");
  }
  return call;
}

function readMessage(call: LogicalCall, message: JsonObject, path: string): void {
  const role = asString(message.role, `${path}.role`);
  const texts = systemRoles.has(role) ? call.system : call.messages;
  const content = message.content;
  if (typeof content === "string") texts.push(content);
  else if (content !== undefined && content !== null) {
    asArray(content, `${path}.content`).forEach((value, index) => {
      readContentPart(call, texts, asObject(value, `${path}.content[${index}]`), `${path}.content[${index}]`);
    });
  }
  const refusal = optionalString(message.refusal, `${path}.refusal`);
  if (refusal !== undefined) texts.push(refusal);
  const toolCalls = optionalArray(message.tool_calls, `${path}.tool_calls`) ?? [];
  toolCalls.forEach((value, index) => {
    const toolCall = asObject(value, `${path}.tool_calls[${index}]`);
    const member = toolCall.custom !== undefined && toolCall.function === undefined ? "custom" : "function";
    readInvocation(texts, toolCall[member], `${path}.tool_calls[${index}].${member}`);
  });
  if (message.function_call !== undefined && message.function_call !== null) {
    readInvocation(texts, message.function_call, `${path}.function_call`);
  }
}

function readContentPart(call: LogicalCall, texts: string[], part: JsonObject, path: string): void {
  const type = asString(part.type, `${path}.type`);
  if (type === "text") texts.push(asString(part.text, `${path}.text`));
  else if (type === "refusal") texts.push(asString(part.refusal, `${path}.refusal`));
  else if (mediaParts.has(type)) call.mediaParts++;
  else texts.push(textOf(part));
}

/** A tool call as the model sees it: its name and its arguments (or input) as text. */
function readInvocation(texts: string[], value: unknown, path: string): void {
  const invocation = asObject(value, path);
  const name = optionalString(invocation.name, `${path}.name`);
  if (name !== undefined) texts.push(name);
  const argumentsText = invocation.arguments ?? invocation.input;
  if (argumentsText !== undefined) texts.push(textOf(argumentsText));
}
