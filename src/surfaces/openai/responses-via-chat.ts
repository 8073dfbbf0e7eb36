import type {
  FunctionTool,
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputRefusal,
  ResponseOutputText,
  ResponseStreamEvent,
  ResponseTextConfig,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { type GatewayError, invalidRequest } from "../../errors/gateway-error.js";
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

/*
 * The OpenAI Responses API for a model routed to another provider, by way of Chat Completions: the
 * request becomes a Chat Completions request (which the provider's `ChatTranslation` takes), and the
 * translated `chat.completion` or its chunks become a Responses `response` or its stream events.
 * What has no counterpart is refused as INVALID_REQUEST naming the field; nothing is dropped silently
 * except what carries nothing for another provider (reasoning items, replayed ids and annotations,
 * the summary setting).
 */

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

/** Why some members cannot be translated, for the refusal's message (fixed text, no request content). */
const reasons = new Map([
  ["previous_response_id", "the gateway keeps no responses of such models"],
  ["conversation", "the gateway keeps no conversations for such models"],
  ["background", "it is answered while the client waits"],
  ["prompt", "stored prompt templates live at OpenAI"],
  ["truncation", "only 'disabled' is possible"],
  ["include", "it asks for output such a model does not give"],
]);

/** The refusal of a member, by its path, that the Chat Completions route cannot carry. */
function untranslatable(path: string): GatewayError {
  const reason = reasons.get(path);
  return invalidRequest(
    `'${path}' cannot be translated for a model routed to another provider${reason === undefined ? "" : ` (${reason})`}; nothing was sent.`,
    path,
  );
}

/** Refuses every member of `value` outside `known` that is set (not null). */
function onlyMembers(value: JsonObject, known: readonly string[], path: string): void {
  for (const [name, member] of Object.entries(value)) {
    if (member !== undefined && member !== null && !known.includes(name)) throw untranslatable(`${path}.${name}`);
  }
}

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
function messagesOf(body: JsonObject): JsonObject[] {
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

/**
 * A response as the API sends it: `output_text` is the SDK's convenience, not a wire member; `store`
 * is echoed, though the SDK's type does not declare it.
 */
type WireResponse = Omit<Response, "output_text"> & { store: boolean };

/** How a response ended, or that it is still running. */
interface Outcome {
  status: "in_progress" | "completed" | "incomplete";
  reason?: "max_output_tokens" | "content_filter";
}

/** A Chat Completions `finish_reason` as the response's status: cut short by the length limit or a filter, or complete. */
function outcomeOf(finishReason: unknown): Outcome {
  if (finishReason === "length") return { status: "incomplete", reason: "max_output_tokens" };
  if (finishReason === "content_filter") return { status: "incomplete", reason: "content_filter" };
  return { status: "completed" };
}

/** What a response reports besides the request: its id, times, model, output and usage. */
interface Generated extends Outcome {
  id: string;
  /** When it completed, in seconds since the epoch; only a completed response reports it. */
  completedAt: number;
  createdAt: number;
  model: string;
  output: ResponseOutputItem[];
  usage?: ResponseUsage | undefined;
}

/** The request's function tools as the response echoes them; without `strict` the call was not strict. */
function echoedTools(request: JsonObject): FunctionTool[] {
  const tools = (Array.isArray(request.tools) ? request.tools : []).filter(isObject);
  return tools
    .filter((tool) => tool.type === "function")
    .map((tool) => ({
      type: "function",
      name: String(tool.name),
      description: typeof tool.description === "string" ? tool.description : null,
      parameters: isObject(tool.parameters) ? tool.parameters : null,
      strict: tool.strict === true,
    }));
}

function numberOr<T>(value: unknown, otherwise: T): number | T {
  return typeof value === "number" ? value : otherwise;
}

function stringOr<T>(value: unknown, otherwise: T): string | T {
  return typeof value === "string" ? value : otherwise;
}

/** The values the response's type allows for the echoed verbosity and reasoning effort. */
const verbosities = ["low", "medium", "high"] as const;
const efforts = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

/** `text` as the response echoes it: the format asked for (plain text by default) and the verbosity, if any. */
function echoedText(request: JsonObject): ResponseTextConfig {
  const text = isObject(request.text) ? request.text : {};
  const format = isObject(text.format) ? text.format : {};
  const verbosity = verbosities.find((level) => level === text.verbosity);
  const echo: ResponseTextConfig = verbosity === undefined ? {} : { verbosity };
  if (format.type === "json_object") return { format: { type: "json_object" }, ...echo };
  if (format.type !== "json_schema") return { format: { type: "text" }, ...echo };
  const schema = {
    type: "json_schema" as const,
    name: String(format.name),
    schema: isObject(format.schema) ? format.schema : {},
    ...(typeof format.description === "string" ? { description: format.description } : {}),
    ...(typeof format.strict === "boolean" ? { strict: format.strict } : {}),
  };
  return { format: schema, ...echo };
}

/** The request's metadata as the response echoes it: string values only, as the API keeps them. */
function echoedMetadata(request: JsonObject): Record<string, string> {
  const metadata = isObject(request.metadata) ? request.metadata : {};
  return Object.fromEntries(
    Object.entries(metadata).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/** The response object: what was generated, and the request's settings as the API echoes them. */
function responseOf(request: JsonObject, generated: Generated): WireResponse {
  const reasoning = isObject(request.reasoning) ? request.reasoning : {};
  return {
    id: generated.id,
    object: "response",
    created_at: generated.createdAt,
    status: generated.status,
    background: false,
    ...(generated.status === "completed" ? { completed_at: generated.completedAt } : {}),
    error: null,
    incomplete_details: generated.reason === undefined ? null : { reason: generated.reason },
    instructions: stringOr(request.instructions, null),
    max_output_tokens: numberOr(request.max_output_tokens, null),
    model: generated.model,
    output: generated.output,
    parallel_tool_calls: request.parallel_tool_calls !== false,
    previous_response_id: null,
    prompt_cache_key: stringOr(request.prompt_cache_key, null),
    reasoning: { effort: efforts.find((effort) => effort === reasoning.effort) ?? null, summary: null },
    safety_identifier: stringOr(request.safety_identifier, null),
    service_tier: "default",
    // Not kept by the gateway, whatever the request asked: a later turn cannot name it.
    store: false,
    temperature: numberOr(request.temperature, null),
    text: echoedText(request),
    tool_choice: echoedToolChoice(request.tool_choice),
    tools: echoedTools(request),
    top_p: numberOr(request.top_p, null),
    truncation: "disabled",
    ...(generated.usage === undefined ? {} : { usage: generated.usage }),
    ...(typeof request.user === "string" ? { user: request.user } : {}),
    metadata: echoedMetadata(request),
  };
}

/** `tool_choice` as the response echoes it: a mode (`auto` by default) or the named function. */
function echoedToolChoice(choice: unknown): Response["tool_choice"] {
  if (choice === "none" || choice === "required") return choice;
  if (isObject(choice) && choice.type === "function") return { type: "function", name: String(choice.name) };
  return "auto";
}

/** Chat Completions usage as Responses usage; undefined when there is none. */
function usageOf(usage: unknown): ResponseUsage | undefined {
  if (!isObject(usage)) return undefined;
  const prompt = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const completion = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  const input = numberOr(usage.prompt_tokens, 0);
  const output = numberOr(usage.completion_tokens, 0);
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: numberOr(prompt.cached_tokens, 0),
      cache_write_tokens: numberOr(prompt.cache_write_tokens, 0),
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: numberOr(completion.reasoning_tokens, 0) },
    total_tokens: numberOr(usage.total_tokens, input + output),
  };
}

/** The clock's time (milliseconds, as `Date.now`) in whole seconds, as the API gives times. */
function seconds(clock: () => number): number {
  return Math.floor(clock() / 1000);
}

/** An output item's id, made from the response's (`resp_…`) and the item's place in the output. */
function itemId(prefix: string, responseId: string, outputIndex: number): string {
  const base = `${prefix}_${responseId.slice(5)}`;
  return outputIndex === 0 ? base : `${base}_${outputIndex}`;
}

function textPart(text: string): ResponseOutputText {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

function refusalPart(refusal: string): ResponseOutputRefusal {
  return { type: "refusal", refusal };
}

/** Marks the last output item incomplete when the response is: that is where the answer was cut. */
function markCut(output: ResponseOutputItem[], outcome: Outcome): ResponseOutputItem[] {
  const last = output.at(-1);
  if (outcome.status !== "incomplete" || (last?.type !== "message" && last?.type !== "function_call")) return output;
  return [...output.slice(0, -1), { ...last, status: "incomplete" }];
}

/**
 * The Responses `response` for a translated `chat.completion` of a request (`request`, the Responses
 * body): a message item for its text (or refusal), then one `function_call` item per tool call.
 */
export function chatToResponse(
  completion: JsonObject,
  request: JsonObject,
  id: string,
  clock: () => number = Date.now,
): JsonObject {
  const now = seconds(clock);
  const choice = (Array.isArray(completion.choices) ? completion.choices : []).find(isObject) ?? {};
  const message = isObject(choice.message) ? choice.message : {};
  const outcome = outcomeOf(choice.finish_reason);
  const output: ResponseOutputItem[] = [];
  const content = [
    ...(typeof message.content === "string" && message.content !== "" ? [textPart(message.content)] : []),
    ...(typeof message.refusal === "string" && message.refusal !== "" ? [refusalPart(message.refusal)] : []),
  ];
  if (content.length > 0) {
    output.push({ id: itemId("msg", id, 0), type: "message", status: "completed", role: "assistant", content });
  }
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    output.push({
      type: "function_call",
      id: itemId("fc", id, output.length),
      call_id: String(call.id),
      name: String(call.function.name),
      arguments: stringOr(call.function.arguments, ""),
      status: "completed",
    });
  }
  const response = responseOf(request, {
    ...outcome,
    id,
    createdAt: numberOr(completion.created, now),
    completedAt: now,
    model: stringOr(completion.model, String(request.model)),
    output: markCut(output, outcome),
    usage: usageOf(completion.usage),
  });
  return { ...response };
}

/** A stream event before it is numbered; the events that carry the response carry it as sent. */
type UnnumberedEvent =
  | (ResponseStreamEvent extends infer Event
      ? Event extends ResponseStreamEvent
        ? Event extends { response: Response }
          ? never
          : Omit<Event, "sequence_number">
        : never
      : never)
  | {
      type: "response.created" | "response.in_progress" | "response.completed" | "response.incomplete";
      response: WireResponse;
    };

/** A content part being streamed: output text or a refusal, and what of it arrived. */
interface OpenPart {
  kind: "text" | "refusal";
  text: string;
}

/** The message item being streamed: its finished parts and its open one. */
interface OpenMessage {
  kind: "message";
  id: string;
  outputIndex: number;
  parts: (ResponseOutputText | ResponseOutputRefusal)[];
  part?: OpenPart | undefined;
}

/** Where a content part sits: its item, the item's place in the output, its own in the item. */
interface PartPlace {
  item_id: string;
  output_index: number;
  content_index: number;
}

function placeOf(message: OpenMessage): PartPlace {
  return { item_id: message.id, output_index: message.outputIndex, content_index: message.parts.length };
}

/** The function call being streamed, with the index Chat Completions gives it. */
interface OpenCall {
  kind: "call";
  index: number;
  outputIndex: number;
  item: ResponseFunctionToolCall & { id: string };
}

/** Turns `chat.completion.chunk` objects into Responses stream events, in order. */
export interface ResponsesStreamTranslator {
  /** The events one chunk becomes (the opening events come with the first). */
  chunk(chunk: JsonObject): JsonObject[];
  /** The closing events, through `response.completed` or `response.incomplete`, once the chat stream ended. */
  end(): JsonObject[];
}

/**
 * A translator of one streamed answer to Responses events, numbered from 0. Each output item is
 * closed before the next opens, as the API streams them: text then tool calls give the output
 * `chatToResponse` gives for the whole answer. Tool calls arrive one after another, as Chat
 * Completions streams them; a chunk that returns to a closed call is a fault of the translation
 * before and throws.
 */
export function chatStreamToResponses(
  request: JsonObject,
  id: string,
  createdAt: number,
  clock: () => number = Date.now,
): ResponsesStreamTranslator {
  let sequence = 0;
  let pending: JsonObject[] = [];
  let started = false;
  let model = String(request.model);
  let open: OpenMessage | OpenCall | undefined;
  let finishReason: unknown;
  let usage: ResponseUsage | undefined;
  const output: ResponseOutputItem[] = [];
  const closedCalls = new Set<number>();

  const emit = (event: UnnumberedEvent): void => {
    pending.push({ ...event, sequence_number: sequence++ });
  };
  const drain = (): JsonObject[] => {
    const events = pending;
    pending = [];
    return events;
  };
  const snapshot = (outcome: Outcome, items: ResponseOutputItem[]): WireResponse =>
    responseOf(request, {
      ...outcome,
      id,
      createdAt,
      completedAt: seconds(clock),
      model,
      output: items,
      usage: outcome.status === "in_progress" ? undefined : usage,
    });

  const start = (): void => {
    if (started) return;
    started = true;
    const response = snapshot({ status: "in_progress" }, []);
    emit({ type: "response.created", response });
    emit({ type: "response.in_progress", response });
  };

  const closePart = (message: OpenMessage): void => {
    const { part } = message;
    if (part === undefined) return;
    const at = placeOf(message);
    const done = part.kind === "text" ? textPart(part.text) : refusalPart(part.text);
    if (part.kind === "text") emit({ type: "response.output_text.done", ...at, text: part.text, logprobs: [] });
    else emit({ type: "response.refusal.done", ...at, refusal: part.text });
    emit({ type: "response.content_part.done", ...at, part: done });
    message.parts.push(done);
    message.part = undefined;
  };

  const close = (status: "completed" | "incomplete"): void => {
    const item = open;
    if (item === undefined) return;
    let done: ResponseOutputItem;
    if (item.kind === "message") {
      closePart(item);
      done = { id: item.id, type: "message", status, role: "assistant", content: item.parts };
    } else {
      const { id: itemId, name, arguments: args } = item.item;
      emit({
        type: "response.function_call_arguments.done",
        item_id: itemId,
        output_index: item.outputIndex,
        name,
        arguments: args,
      });
      done = { ...item.item, status };
      closedCalls.add(item.index);
    }
    emit({ type: "response.output_item.done", output_index: item.outputIndex, item: done });
    output.push(done);
    open = undefined;
  };

  /** The open content part of `kind`, opening a message item and the part as needed. */
  const openPart = (kind: OpenPart["kind"]): { part: OpenPart; place: PartPlace } => {
    if (open?.kind !== "message") {
      close("completed");
      const outputIndex = output.length;
      const message: OpenMessage = { kind: "message", id: itemId("msg", id, outputIndex), outputIndex, parts: [] };
      emit({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { id: message.id, type: "message", status: "in_progress", role: "assistant", content: [] },
      });
      open = message;
    }
    const message = open;
    if (message.part?.kind !== kind) {
      closePart(message);
      emit({
        type: "response.content_part.added",
        ...placeOf(message),
        part: kind === "text" ? textPart("") : refusalPart(""),
      });
    }
    message.part = message.part?.kind === kind ? message.part : { kind, text: "" };
    return { part: message.part, place: placeOf(message) };
  };

  const addText = (delta: string): void => {
    const { part, place } = openPart("text");
    part.text += delta;
    emit({ type: "response.output_text.delta", ...place, delta, logprobs: [] });
  };

  const addRefusal = (delta: string): void => {
    const { part, place } = openPart("refusal");
    part.text += delta;
    emit({ type: "response.refusal.delta", ...place, delta });
  };

  const addToolCall = (value: unknown): void => {
    if (!isObject(value)) return;
    const index = numberOr(value.index, 0);
    const fn = isObject(value.function) ? value.function : {};
    if (open?.kind !== "call" || open.index !== index) {
      if (closedCalls.has(index)) {
        throw new Error(`The chat stream returned to tool call ${index} after the next began.`);
      }
      close("completed");
      const outputIndex = output.length;
      const item = {
        type: "function_call" as const,
        id: itemId("fc", id, outputIndex),
        call_id: stringOr(value.id, ""),
        name: stringOr(fn.name, ""),
        arguments: "",
        status: "in_progress" as const,
      };
      emit({ type: "response.output_item.added", output_index: outputIndex, item });
      open = { kind: "call", index, outputIndex, item: { ...item } };
    }
    const call = open;
    const delta = stringOr(fn.arguments, "");
    if (delta === "") return;
    call.item.arguments += delta;
    emit({
      type: "response.function_call_arguments.delta",
      item_id: call.item.id,
      output_index: call.outputIndex,
      delta,
    });
  };

  return {
    chunk(chunk) {
      if (!started && typeof chunk.model === "string") model = chunk.model;
      start();
      const choice = (Array.isArray(chunk.choices) ? chunk.choices : []).find(isObject);
      const delta = isObject(choice?.delta) ? choice.delta : {};
      if (typeof delta.content === "string" && delta.content !== "") addText(delta.content);
      if (typeof delta.refusal === "string" && delta.refusal !== "") addRefusal(delta.refusal);
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) addToolCall(call);
      if (choice?.finish_reason != null) finishReason = choice.finish_reason;
      if (isObject(chunk.usage)) usage = usageOf(chunk.usage);
      return drain();
    },
    end() {
      start();
      const outcome = outcomeOf(finishReason);
      close(outcome.status === "incomplete" ? "incomplete" : "completed");
      const response = snapshot(outcome, output);
      emit({ type: outcome.status === "incomplete" ? "response.incomplete" : "response.completed", response });
      return drain();
    },
  };
}
