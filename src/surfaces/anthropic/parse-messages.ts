import { invalidRequest } from "../../errors/gateway-error.js";
import { emptyCall, type InlinePrefix, type LogicalCall } from "../../logical-call.js";
import {
  asArray,
  asObject,
  asString,
  isObject,
  type JsonObject,
  optionalArray,
  optionalFlag,
  optionalObject,
  optionalString,
  textOf,
} from "../wire-fields.js";

const mediaBlocks = new Set(["image", "document", "container_upload"]);
const silentBlocks = new Set(["redacted_thinking"]);

/** Parses a Messages (or count_tokens) body into its logical call. */
export function parseMessages(body: JsonObject): LogicalCall {
  const call = emptyCall();
  call.model = optionalString(body.model, "model");
  call.stream = optionalFlag(body.stream, "stream");
  // Cache breakpoints: the entries up to the last block marked `cache_control`, per section.
  const breakpoints = { tools: 0, system: 0, messages: 0 };
  if (typeof body.system === "string") call.system.push(body.system);
  else {
    readBlocks(call, optionalArray(body.system, "system") ?? [], "system", call.system, () => {
      breakpoints.system = call.system.length;
    });
  }
  asArray(body.messages, "messages").forEach((value, index) => {
    const path = `messages[${index}]`;
    const message = asObject(value, path);
    asString(message.role, `${path}.role`);
    if (typeof message.content === "string") call.messages.push(message.content);
    else {
      readBlocks(call, asArray(message.content, `${path}.content`), `${path}.content`, call.messages, () => {
        breakpoints.messages = call.messages.length;
      });
    }
  });
  call.tools.push(...(optionalArray(body.tools, "tools") ?? []));
  call.tools.forEach((tool, index) => {
    if (isObject(tool) && tool.cache_control !== undefined && tool.cache_control !== null)
      breakpoints.tools = index + 1;
  });
  // A top-level cache_control puts the breakpoint on the last cacheable block.
  if (body.cache_control !== undefined && body.cache_control !== null) breakpoints.messages = call.messages.length;
  call.inlinePrefix = inlinePrefixOf(call, breakpoints);
  const configFormat = optionalObject(
    optionalObject(body.output_config, "output_config")?.format,
    "output_config.format",
  );
  const betaFormat = optionalObject(body.output_format, "output_format");
  if (configFormat !== undefined && betaFormat !== undefined) {
    throw invalidRequest("'output_config.format' and 'output_format' must not both be set.", "output_format");
  }
  const [format, formatPath] = configFormat ? [configFormat, "output_config.format"] : [betaFormat, "output_format"];
  if (format?.type === "json_schema") call.responseSchema = optionalObject(format.schema, `${formatPath}.schema`);
  return call;
}

/** The cached part of the request: tools, then system, then messages, up to the last breakpoint. */
function inlinePrefixOf(call: LogicalCall, breakpoints: InlinePrefix): InlinePrefix | undefined {
  const all = { tools: call.tools.length, system: call.system.length };
  if (breakpoints.messages > 0) return { ...all, messages: breakpoints.messages };
  if (breakpoints.system > 0) return { tools: all.tools, system: breakpoints.system, messages: 0 };
  if (breakpoints.tools > 0) return { tools: breakpoints.tools, system: 0, messages: 0 };
  return undefined;
}

function readBlocks(
  call: LogicalCall,
  blocks: unknown[],
  path: string,
  texts: string[],
  onBreakpoint?: () => void,
): void {
  blocks.forEach((value, index) => {
    const blockPath = `${path}[${index}]`;
    const block = asObject(value, blockPath);
    readBlock(call, block, blockPath, texts);
    if (onBreakpoint && block.cache_control !== undefined && block.cache_control !== null) onBreakpoint();
  });
}

function readBlock(call: LogicalCall, block: JsonObject, path: string, texts: string[]): void {
  const type = asString(block.type, `${path}.type`);
  if (type === "text") texts.push(asString(block.text, `${path}.text`));
  else if (type === "thinking") texts.push(asString(block.thinking, `${path}.thinking`));
  else if (type === "tool_use" || type === "server_tool_use") {
    texts.push(asString(block.name, `${path}.name`), textOf(block.input ?? {}));
  } else if (type === "tool_result") {
    const content = block.content;
    if (typeof content === "string") texts.push(content);
    else readBlocks(call, optionalArray(content, `${path}.content`) ?? [], `${path}.content`, texts);
  } else if (type === "document" && isTextDocument(block)) {
    readDocument(call, block, path, texts);
  } else if (mediaBlocks.has(type)) call.mediaParts++;
  else if (!silentBlocks.has(type)) texts.push(textOf(block));
}

/** A document whose source is plain text or content blocks is text the model reads. */
function isTextDocument(block: JsonObject): boolean {
  const source = block.source;
  return (
    typeof source === "object" &&
    source !== null &&
    "type" in source &&
    (source.type === "text" || source.type === "content")
  );
}

function readDocument(call: LogicalCall, block: JsonObject, path: string, texts: string[]): void {
  const source = asObject(block.source, `${path}.source`);
  if (source.type === "text") texts.push(asString(source.data, `${path}.source.data`));
  else if (typeof source.content === "string") texts.push(source.content);
  else readBlocks(call, asArray(source.content, `${path}.source.content`), `${path}.source.content`, texts);
  for (const field of ["title", "context"]) {
    const text = optionalString(block[field], `${path}.${field}`);
    if (text !== undefined) texts.push(text);
  }
}
