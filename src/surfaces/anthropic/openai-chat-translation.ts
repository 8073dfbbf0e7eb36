import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageFunctionToolCall,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import { type GatewayError, invalidRequest } from "../../errors/gateway-error.js";
import { base64Text } from "../media.js";
import type { ChatStreamTranslator, ChatTranslation, ReasoningLevel, TranslationContext } from "../translation.js";
import {
  asArray,
  asObject,
  asString,
  isObject,
  type JsonObject,
  optionalArray,
  optionalObject,
  optionalString,
} from "../wire-fields.js";

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

/** The members each message role may carry (`role` and `name` aside); any other has no counterpart. */
const messageMembers: Record<string, ReadonlySet<string>> = {
  system: new Set(["content"]),
  developer: new Set(["content"]),
  user: new Set(["content"]),
  assistant: new Set(["content", "refusal", "tool_calls"]),
  tool: new Set(["content", "tool_call_id"]),
};

/** Anthropic's `stop_reason` as a Chat Completions `finish_reason`; anything else finishes as `stop`. */
const finishReasons: Record<string, ChatCompletion.Choice["finish_reason"]> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/**
 * The refusal of a field that has no counterpart. `droppable` names the parameter a policy may list
 * as droppable to have it dropped instead, when it may.
 */
function noCounterpart(path: string, droppable?: string): GatewayError {
  const remedy =
    droppable === undefined ? "remove it" : `remove it, or list '${droppable}' under the policy's droppable parameters`;
  return invalidRequest(
    `'${path}' has no counterpart in the Anthropic Messages API; ${remedy}. Nothing was sent.`,
    path,
  );
}

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

/** Marks a block as the end of a cached prefix when the part carried an explicit breakpoint. */
function withBreakpoint(block: JsonObject, part: JsonObject): JsonObject {
  return part.prompt_cache_breakpoint == null ? block : { ...block, cache_control: { type: "ephemeral" } };
}

/** A base64 data URL's media type and data; undefined when the URL is not a data URL. */
function dataUrl(url: string, path: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  const header = url.slice(5, comma === -1 ? url.length : comma).split(";");
  const mediaType = (header[0] ?? "").trim().toLowerCase();
  if (comma === -1 || mediaType === "" || !header.includes("base64")) {
    throw invalidRequest(`'${path}' must be a base64 data URL with a media type.`, path);
  }
  return { mediaType, data: url.slice(comma + 1) };
}

/** An `image_url` part as an image block: inline (base64) from a data URL, else by URL. */
function imageBlock(part: JsonObject, path: string): JsonObject {
  const urlPath = `${path}.image_url.url`;
  const url = asString(asObject(part.image_url, `${path}.image_url`).url, urlPath);
  const inline = dataUrl(url, urlPath);
  if (inline) return { type: "image", source: { type: "base64", media_type: inline.mediaType, data: inline.data } };
  if (!/^https?:\/\//i.test(url)) throw invalidRequest(`'${urlPath}' must be a data URL or an http(s) URL.`, urlPath);
  return { type: "image", source: { type: "url", url } };
}

/**
 * A `file` part as a document block: a PDF inline (a data URL, or bare base64 named `*.pdf`) or by
 * URL, or plain text inline. A stored file (`file_id`) and other media have no counterpart.
 */
function documentBlock(part: JsonObject, path: string): JsonObject {
  const file = asObject(part.file, `${path}.file`);
  if (file.file_id != null) throw noCounterpart(`${path}.file.file_id`);
  const filename = optionalString(file.filename, `${path}.file.filename`);
  const titled = (source: JsonObject): JsonObject =>
    filename === undefined ? { type: "document", source } : { type: "document", source, title: filename };
  const dataPath = `${path}.file.file_data`;
  const fileData = optionalString(file.file_data, dataPath);
  if (fileData !== undefined) {
    const inline = dataUrl(fileData, dataPath) ?? {
      mediaType: filename?.toLowerCase().endsWith(".pdf") ? "application/pdf" : "",
      data: fileData,
    };
    if (inline.mediaType === "application/pdf") {
      return titled({ type: "base64", media_type: "application/pdf", data: inline.data });
    }
    const text = inline.mediaType === "text/plain" ? base64Text(inline.data) : undefined;
    if (text === undefined) throw noCounterpart(dataPath);
    return titled({ type: "text", media_type: "text/plain", data: text });
  }
  const fileUrl = optionalString(file.file_url, `${path}.file.file_url`);
  if (fileUrl !== undefined) return titled({ type: "url", url: fileUrl });
  throw invalidRequest(`'${path}.file' must carry 'file_data' or 'file_url'.`, `${path}.file`);
}

/**
 * A message's content as Anthropic blocks: a string is one text block; parts map one to one
 * (empty text is left out: Anthropic refuses empty text blocks). `image_url.detail` is a hint
 * without a counterpart and is not sent. `kinds` lists the part types the role may carry.
 */
function contentBlocks(content: unknown, path: string, kinds: ReadonlySet<string>): JsonObject[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  const blocks: JsonObject[] = [];
  asArray(content, `${path}.content`).forEach((value, index) => {
    const partPath = `${path}.content[${index}]`;
    const part = asObject(value, partPath);
    const type = asString(part.type, `${partPath}.type`);
    if (type === "input_audio") throw noCounterpart(`${partPath}.input_audio`);
    if (!kinds.has(type)) throw noCounterpart(`${partPath}.type`);
    let block: JsonObject;
    if (type === "text" || type === "refusal") {
      const text = asString(part[type], `${partPath}.${type}`);
      if (text === "") return;
      block = { type: "text", text };
    } else if (type === "image_url") block = imageBlock(part, partPath);
    else block = documentBlock(part, partPath);
    blocks.push(withBreakpoint(block, part));
  });
  return blocks;
}

const textKinds = new Set(["text"]);
const userKinds = new Set(["text", "image_url", "file"]);
const assistantKinds = new Set(["text", "refusal"]);

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
function conversationOf(messages: unknown[], context: TranslationContext): Conversation {
  const conversation: Conversation = { system: [], turns: [] };
  messages.forEach((value, index) => {
    const path = `messages[${index}]`;
    const message = asObject(value, path);
    const role = asString(message.role, `${path}.role`);
    if (role === "function") throw noCounterpart(`${path}.role`);
    const members = messageMembers[role];
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
function systemOf(blocks: JsonObject[]): unknown {
  const only = blocks.length === 1 ? blocks[0] : undefined;
  return only !== undefined && only.cache_control === undefined ? only.text : blocks;
}

/** The function tools as Anthropic tools; other tool types have no counterpart. */
function toolsOf(tools: unknown[]): JsonObject[] {
  return tools.map((value, index) => {
    const path = `tools[${index}]`;
    const tool = asObject(value, path);
    if (tool.type !== "function") throw noCounterpart(`${path}.type`);
    const fn = asObject(tool.function, `${path}.function`);
    const description = optionalString(fn.description, `${path}.function.description`);
    return {
      name: asString(fn.name, `${path}.function.name`),
      ...(description === undefined ? {} : { description }),
      input_schema: optionalObject(fn.parameters, `${path}.function.parameters`) ?? { type: "object" },
      ...(fn.strict === true ? { strict: true } : {}),
    };
  });
}

/** `tool_choice` (and `parallel_tool_calls: false`) as Anthropic's `tool_choice`; undefined when neither is set. */
function toolChoiceOf(body: JsonObject, thinking: boolean): JsonObject | undefined {
  const choice = body.tool_choice;
  let native: JsonObject | undefined;
  if (choice === undefined || choice === null) native = undefined;
  else if (choice === "auto") native = { type: "auto" };
  else if (choice === "required") native = { type: "any" };
  else if (choice === "none") native = { type: "none" };
  else if (isObject(choice)) {
    if (choice.type !== "function") throw noCounterpart("tool_choice.type");
    const fn = asObject(choice.function, "tool_choice.function");
    native = { type: "tool", name: asString(fn.name, "tool_choice.function.name") };
  } else throw invalidRequest("'tool_choice' must be 'none', 'auto', 'required' or a named function.", "tool_choice");
  if (thinking && (native?.type === "any" || native?.type === "tool")) {
    throw invalidRequest(
      "'tool_choice' forces a tool call, which Anthropic does not allow while thinking is on; use 'auto' or a lower reasoning level. Nothing was sent.",
      "tool_choice",
    );
  }
  if (body.parallel_tool_calls !== false || body.tools == null || native?.type === "none") return native;
  return { ...(native ?? { type: "auto" }), disable_parallel_tool_use: true };
}

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
function request(body: JsonObject, context: TranslationContext): { path: string; body: JsonObject } {
  refuseUnhandled(body, context);
  const level = context.reasoning;
  const budget = level === undefined ? undefined : anthropicThinkingBudgets[level];
  const thinking = budget !== undefined;
  const conversation = conversationOf(asArray(body.messages, "messages"), context);
  const clientMax =
    optionalNumber(body.max_completion_tokens, "max_completion_tokens") ??
    optionalNumber(body.max_tokens, "max_tokens");
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

/** A count the provider reports, or 0 when absent. */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Anthropic's token counts, as the stream or the answer report them. */
interface TokenCounts {
  input: number;
  cacheRead: number;
  cacheCreation: number;
  output: number;
}

/** Reads the counts a usage object carries, keeping the others. */
function readUsage(usage: unknown, into: TokenCounts): void {
  if (!isObject(usage)) return;
  if (typeof usage.input_tokens === "number") into.input = usage.input_tokens;
  if (typeof usage.cache_read_input_tokens === "number") into.cacheRead = usage.cache_read_input_tokens;
  if (typeof usage.cache_creation_input_tokens === "number") into.cacheCreation = usage.cache_creation_input_tokens;
  if (typeof usage.output_tokens === "number") into.output = usage.output_tokens;
}

/** Chat Completions usage: the prompt counts cached reads and cache writes too. */
function usageOf(counts: TokenCounts): CompletionUsage {
  const prompt = counts.input + counts.cacheRead + counts.cacheCreation;
  return {
    prompt_tokens: prompt,
    completion_tokens: counts.output,
    total_tokens: prompt + counts.output,
    prompt_tokens_details: { cached_tokens: counts.cacheRead },
  };
}

function finishReasonOf(stopReason: unknown): ChatCompletion.Choice["finish_reason"] {
  return (typeof stopReason === "string" ? finishReasons[stopReason] : undefined) ?? "stop";
}

/** A whole Messages answer as a `chat.completion`; thinking blocks are not content. */
function answer(native: JsonObject, context: TranslationContext): JsonObject {
  const blocks = (Array.isArray(native.content) ? native.content : []).filter(isObject);
  const texts = blocks.filter((block) => block.type === "text").map((block) => String(block.text ?? ""));
  const toolCalls = blocks
    .filter((block) => block.type === "tool_use")
    .map(
      (block): ChatCompletionMessageFunctionToolCall => ({
        id: String(block.id),
        type: "function",
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      }),
    );
  const counts: TokenCounts = { input: 0, cacheRead: 0, cacheCreation: 0, output: 0 };
  readUsage(native.usage, counts);
  const completion: ChatCompletion = {
    id: context.id,
    object: "chat.completion",
    created: context.created,
    model: context.publicModel,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: texts.length === 0 ? null : texts.join(""),
          refusal: null,
          ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
        },
        finish_reason: finishReasonOf(native.stop_reason),
        logprobs: null,
      },
    ],
    usage: usageOf(counts),
  };
  return { ...completion };
}

/** A tool call being streamed: its index among the answer's tool calls, and whether arguments arrived. */
interface StreamedToolCall {
  index: number;
  hasArguments: boolean;
}

/** The translator of one streamed Messages answer into `chat.completion.chunk` objects. */
function stream(body: JsonObject, context: TranslationContext): ChatStreamTranslator {
  const counts: TokenCounts = { input: 0, cacheRead: 0, cacheCreation: 0, output: 0 };
  /** Tool calls by their content block's index. */
  const toolCalls = new Map<number, StreamedToolCall>();
  const options = isObject(body.stream_options) ? body.stream_options : {};

  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finishReason: ChatCompletionChunk.Choice["finish_reason"] = null,
  ): JsonObject => {
    const value: ChatCompletionChunk = {
      id: context.id,
      object: "chat.completion.chunk",
      created: context.created,
      model: context.publicModel,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    };
    return { ...value };
  };

  const toolDelta = (toolCall: ChatCompletionChunk.Choice.Delta.ToolCall): JsonObject =>
    chunk({ tool_calls: [toolCall] });

  return {
    event(native) {
      const index = count(native.index);
      const block = isObject(native.content_block) ? native.content_block : {};
      const delta = isObject(native.delta) ? native.delta : {};
      switch (native.type) {
        case "message_start": {
          readUsage(isObject(native.message) ? native.message.usage : undefined, counts);
          return [chunk({ role: "assistant", content: "" })];
        }
        case "content_block_start": {
          if (block.type === "text" && typeof block.text === "string" && block.text !== "") {
            return [chunk({ content: block.text })];
          }
          if (block.type !== "tool_use") return [];
          const toolCall = { index: toolCalls.size, hasArguments: false };
          toolCalls.set(index, toolCall);
          return [
            toolDelta({
              index: toolCall.index,
              id: String(block.id),
              type: "function",
              function: { name: String(block.name), arguments: "" },
            }),
          ];
        }
        case "content_block_delta": {
          if (delta.type === "text_delta" && typeof delta.text === "string") return [chunk({ content: delta.text })];
          const toolCall = toolCalls.get(index);
          if (delta.type !== "input_json_delta" || toolCall === undefined || typeof delta.partial_json !== "string") {
            return [];
          }
          if (delta.partial_json === "") return [];
          toolCall.hasArguments = true;
          return [toolDelta({ index: toolCall.index, function: { arguments: delta.partial_json } })];
        }
        case "content_block_stop": {
          // A tool call without input streams no JSON: its arguments are the empty object.
          const toolCall = toolCalls.get(index);
          if (toolCall === undefined || toolCall.hasArguments) return [];
          toolCall.hasArguments = true;
          return [toolDelta({ index: toolCall.index, function: { arguments: "{}" } })];
        }
        case "message_delta": {
          readUsage(native.usage, counts);
          return delta.stop_reason == null ? [] : [chunk({}, finishReasonOf(delta.stop_reason))];
        }
        default:
          return [];
      }
    },
    end() {
      if (options.include_usage !== true) return [];
      const value: ChatCompletionChunk = {
        id: context.id,
        object: "chat.completion.chunk",
        created: context.created,
        model: context.publicModel,
        choices: [],
        usage: usageOf(counts),
      };
      return [{ ...value }];
    },
  };
}

/** Chat Completions to and from the Anthropic Messages API. */
export const anthropicChatTranslation: ChatTranslation = { request, answer, stream };
