import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionTokenLogprob,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import { type GatewayError, invalidRequest } from "../../errors/gateway-error.js";
import type {
  ChatStreamTranslator,
  ChatTranslation,
  NativeRequest,
  ReasoningLevel,
  TranslationContext,
} from "../translation.js";
import { asArray, asObject, asString, isObject, type JsonObject, optionalObject } from "../wire-fields.js";

/** `generationConfig.thinkingConfig.thinkingBudget` (tokens) for each reasoning level. */
export const geminiThinkingBudgets: Record<ReasoningLevel, number> = {
  none: 0,
  low: 1024,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32768,
};

/** Chat Completions members the translation below carries into the Gemini request. */
const translatedMembers = new Set([
  "messages",
  "tools",
  "tool_choice",
  "response_format",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "stop",
  "n",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "logprobs",
  "top_logprobs",
]);

/** Members without a Gemini counterpart that do not change the answer: consumed without a word. */
const consumedMembers = new Set([
  "model",
  "stream",
  "stream_options",
  "user",
  "metadata",
  "store",
  "safety_identifier",
  "prompt_cache_key",
  "service_tier",
  "parallel_tool_calls",
  "reasoning_effort",
]);

/**
 * Marks the first function call of each replayed model turn. Gemini 3 refuses a history whose function
 * calls lack the thought signature it issued, and Chat Completions has nowhere to keep one; Google
 * documents this value for function calls that did not come from the model with their signature.
 */
const unsignedFunctionCall = "skip_thought_signature_validator";

/** Chat Completions to and from Gemini `generateContent` (whole and streamed as SSE). */
export const geminiChatTranslation: ChatTranslation = {
  request(body, context) {
    return geminiRequest(body, context);
  },
  answer(native, context) {
    return wireObject(chatCompletion(native, context));
  },
  stream(body, context) {
    const options = isObject(body.stream_options) ? body.stream_options : {};
    return chunkTranslator(context, options.include_usage === true);
  },
};

// ---------------------------------------------------------------------------------------------
// Request

function geminiRequest(body: JsonObject, context: TranslationContext): NativeRequest {
  refuseWithoutCounterpart(body, context.droppable);
  const { systemParts, contents } = translateMessages(asArray(body.messages, "messages"), context);
  const native: JsonObject = { contents };
  if (systemParts.length > 0) native.systemInstruction = { parts: systemParts };
  Object.assign(native, toolMembers(body));
  const generationConfig = generationConfigOf(body, context);
  if (Object.keys(generationConfig).length > 0) native.generationConfig = generationConfig;
  const model = encodeURIComponent(context.upstreamModel);
  const path =
    body.stream === true
      ? `/v1beta/models/${model}:streamGenerateContent?alt=sse`
      : `/v1beta/models/${model}:generateContent`;
  return { path, body: native };
}

/** The refusal for a parameter Gemini has no counterpart for; it names the parameter and the ways out. */
function noCounterpart(param: string, droppableName = param): GatewayError {
  return invalidRequest(
    `'${param}' has no counterpart in the Gemini API; remove it, or list '${droppableName}' under the policy's ` +
      "droppable parameters (translation.droppable) to have it dropped. Nothing was sent.",
    param,
  );
}

/** Refuses every set top-level member that is neither translated, consumed nor droppable. */
function refuseWithoutCounterpart(body: JsonObject, droppable: readonly string[]): void {
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (translatedMembers.has(name) || consumedMembers.has(name) || droppable.includes(name)) continue;
    throw noCounterpart(name);
  }
}

/** A message member that is set (absent and null are not). */
const isSet = (value: unknown) => value !== undefined && value !== null;

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
function translateMessages(
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

/** The message members each role may carry (besides `role`); others only when droppable by their name. */
const messageMembers = new Map<string, readonly string[]>([
  ["system", ["content"]],
  ["developer", ["content"]],
  ["user", ["content"]],
  ["assistant", ["content", "refusal", "tool_calls"]],
  ["tool", ["content", "tool_call_id", "name"]],
]);

/**
 * Refuses message members without a Gemini counterpart (`name`, `audio`, unknown ones) unless the
 * policy lets their name be dropped; legacy `function_call` is refused always.
 */
function refuseMessageMembers(message: JsonObject, role: string, path: string, droppable: readonly string[]): void {
  const allowed = messageMembers.get(role);
  if (allowed === undefined) return;
  for (const [name, value] of Object.entries(message)) {
    if (name === "role" || !isSet(value) || allowed.includes(name)) continue;
    if (name === "function_call") {
      throw invalidRequest(
        `'${path}.function_call' (legacy function calling) is not translated to Gemini; send tool_calls instead.`,
        `${path}.function_call`,
      );
    }
    if (!droppable.includes(name)) throw noCounterpart(`${path}.${name}`, name);
  }
}

/** A message's content as parts with their paths: a string is one text part; absent or null is none. */
function contentParts(content: unknown, path: string): [JsonObject, string][] {
  if (!isSet(content)) return [];
  if (typeof content === "string") return [[{ type: "text", text: content }, path]];
  return asArray(content, path).map((part, j): [JsonObject, string] => {
    const at = `${path}[${j}]`;
    return [asObject(part, at), at];
  });
}

/** The refusal of a content part type the role cannot carry to Gemini. */
function unsupportedPart(path: string, allowed: string): GatewayError {
  return invalidRequest(
    `'${path}.type' must be ${allowed} here; other parts are not translated to Gemini.`,
    `${path}.type`,
  );
}

/** A text part (a string content is read as one). */
function textPart(part: JsonObject, path: string): JsonObject {
  if (part.type !== "text") throw unsupportedPart(path, '"text"');
  return { text: asString(part.text, `${path}.text`) };
}

/** Gemini refuses empty text parts; an empty string says nothing, so it is left out. */
const hasText = (part: JsonObject) => part.text !== "";

/** A user message's parts: text, images, audio and files. */
function userParts(content: unknown, path: string): JsonObject[] {
  return contentParts(content, path)
    .map(([part, at]) => {
      switch (part.type) {
        case "text":
          return textPart(part, at);
        case "image_url": {
          const image = asObject(part.image_url, `${at}.image_url`);
          return mediaPart(asString(image.url, `${at}.image_url.url`), `${at}.image_url.url`, undefined);
        }
        case "input_audio": {
          const audio = asObject(part.input_audio, `${at}.input_audio`);
          const data = asString(audio.data, `${at}.input_audio.data`);
          const format = asString(audio.format, `${at}.input_audio.format`);
          return { inlineData: { mimeType: `audio/${format}`, data } };
        }
        case "file":
          return filePart(asObject(part.file, `${at}.file`), `${at}.file`);
        default:
          throw unsupportedPart(at, '"text", "image_url", "input_audio" or "file"');
      }
    })
    .filter(hasText);
}

/** A file part: inline data (a data URL, or base64 with a telling file name) or a URL; never a stored file id. */
function filePart(file: JsonObject, path: string): JsonObject {
  if (isSet(file.file_id)) {
    throw invalidRequest(
      `'${path}.file_id' names a file stored with OpenAI, which Gemini cannot read; send the file inline as 'file_data'.`,
      `${path}.file_id`,
    );
  }
  const filename = typeof file.filename === "string" ? file.filename : undefined;
  if (isSet(file.file_data)) {
    const data = asString(file.file_data, `${path}.file_data`);
    if (data.startsWith("data:")) return mediaPart(data, `${path}.file_data`, filename);
    const mimeType = filename === undefined ? undefined : mediaTypeOfName(filename);
    if (mimeType === undefined) {
      throw invalidRequest(
        `'${path}.file_data' needs a media type for Gemini: send it as a data URL (data:<type>;base64,…) or with a filename whose extension names it.`,
        `${path}.file_data`,
      );
    }
    return { inlineData: { mimeType, data } };
  }
  if (isSet(file.file_url)) return mediaPart(asString(file.file_url, `${path}.file_url`), `${path}.file_url`, filename);
  throw invalidRequest(`'${path}' must carry 'file_data' or 'file_url'.`, path);
}

/** Media types Gemini reads, by file extension: only the obvious ones. */
const mediaTypesByExtension = new Map([
  ["png", "image/png"],
  ["jpg", "image/jpeg"],
  ["jpeg", "image/jpeg"],
  ["gif", "image/gif"],
  ["webp", "image/webp"],
  ["heic", "image/heic"],
  ["heif", "image/heif"],
  ["pdf", "application/pdf"],
  ["mp3", "audio/mp3"],
  ["wav", "audio/wav"],
  ["flac", "audio/flac"],
  ["ogg", "audio/ogg"],
  ["mp4", "video/mp4"],
  ["mov", "video/mov"],
  ["webm", "video/webm"],
  ["txt", "text/plain"],
  ["csv", "text/csv"],
  ["md", "text/markdown"],
  ["html", "text/html"],
  ["json", "application/json"],
]);

/** The media type a file name or URL path's extension names, if obvious. */
function mediaTypeOfName(name: string): string | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1];
  return extension === undefined ? undefined : mediaTypesByExtension.get(extension.toLowerCase());
}

/** A URL's path, without query and fragment (for its extension); the URL itself when it does not parse. */
function urlPath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** Base64 of text's UTF-8 bytes (works without Node's Buffer). */
function base64OfText(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Media by URL: a data URL becomes `inlineData` (its media type, else the file name's); any other URL
 * `fileData` with the media type its extension names, if any.
 */
function mediaPart(url: string, path: string, filename: string | undefined): JsonObject {
  if (!url.startsWith("data:")) {
    const mimeType = mediaTypeOfName(urlPath(url)) ?? (filename === undefined ? undefined : mediaTypeOfName(filename));
    return { fileData: mimeType === undefined ? { fileUri: url } : { fileUri: url, mimeType } };
  }
  const comma = url.indexOf(",");
  const meta = url.slice(5, comma === -1 ? url.length : comma).split(";");
  const payload = comma === -1 ? "" : url.slice(comma + 1);
  const declared = meta[0] === "" ? undefined : meta[0];
  const mimeType = declared ?? (filename === undefined ? undefined : mediaTypeOfName(filename));
  if (mimeType === undefined) {
    throw invalidRequest(`'${path}' must be a data URL that names its media type (data:<type>;base64,…).`, path);
  }
  if (meta.includes("base64")) return { inlineData: { mimeType, data: payload } };
  let text: string;
  try {
    text = decodeURIComponent(payload);
  } catch {
    throw invalidRequest(`'${path}' must be a base64 or percent-encoded data URL.`, path);
  }
  return { inlineData: { mimeType, data: base64OfText(text) } };
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

/** `tools` and `toolConfig` from `tools` and `tool_choice`; none without function tools. */
function toolMembers(body: JsonObject): JsonObject {
  const tools = isSet(body.tools) ? asArray(body.tools, "tools") : [];
  let declarations = tools.map((value, i) => functionDeclaration(asObject(value, `tools[${i}]`), `tools[${i}]`));
  const choice = isSet(body.tool_choice) ? functionCallingConfig(body.tool_choice) : undefined;
  if (choice?.only !== undefined) {
    const only = new Set(choice.only);
    declarations = declarations.filter((declaration) => only.has(declaration.name as string));
  }
  if (declarations.length === 0) return {};
  const members: JsonObject = { tools: [{ functionDeclarations: declarations }] };
  if (choice !== undefined) members.toolConfig = { functionCallingConfig: choice.config };
  return members;
}

/** A function tool as a function declaration; its parameters go whole as `parametersJsonSchema`. */
function functionDeclaration(tool: JsonObject, path: string): JsonObject {
  if (tool.type !== "function") {
    throw invalidRequest(`'${path}.type' must be "function"; Gemini takes function tools only.`, `${path}.type`);
  }
  const fn = asObject(tool.function, `${path}.function`);
  const declaration: JsonObject = { name: asString(fn.name, `${path}.function.name`) };
  if (isSet(fn.description)) declaration.description = asString(fn.description, `${path}.function.description`);
  if (isSet(fn.parameters)) declaration.parametersJsonSchema = fn.parameters;
  return declaration;
}

const toolChoiceModes = new Map([
  ["auto", "AUTO"],
  ["none", "NONE"],
  ["required", "ANY"],
]);

/**
 * `toolConfig.functionCallingConfig` for a tool choice. `only` lists the tools an `allowed_tools`
 * choice in mode auto keeps: Gemini restricts names only in mode ANY, so the others are not declared.
 */
function functionCallingConfig(choice: unknown): { config: JsonObject; only?: string[] } {
  if (typeof choice === "string") {
    const mode = toolChoiceModes.get(choice);
    if (mode === undefined)
      throw invalidRequest("'tool_choice' must be auto, none, required or a named tool.", "tool_choice");
    return { config: { mode } };
  }
  const named = asObject(choice, "tool_choice");
  if (named.type === "function") {
    const fn = asObject(named.function, "tool_choice.function");
    return { config: { mode: "ANY", allowedFunctionNames: [asString(fn.name, "tool_choice.function.name")] } };
  }
  if (named.type === "allowed_tools") {
    const allowed = asObject(named.allowed_tools, "tool_choice.allowed_tools");
    const names = asArray(allowed.tools, "tool_choice.allowed_tools.tools").map((value, i) => {
      const at = `tool_choice.allowed_tools.tools[${i}]`;
      const tool = asObject(value, at);
      if (tool.type !== "function") throw invalidRequest(`'${at}.type' must be "function".`, `${at}.type`);
      return asString(asObject(tool.function, `${at}.function`).name, `${at}.function.name`);
    });
    if (allowed.mode === "required") return { config: { mode: "ANY", allowedFunctionNames: names } };
    if (allowed.mode === "auto") return { config: { mode: "AUTO" }, only: names };
    throw invalidRequest(
      "'tool_choice.allowed_tools.mode' must be auto or required.",
      "tool_choice.allowed_tools.mode",
    );
  }
  throw invalidRequest(
    `'tool_choice.type' must be "function" or "allowed_tools"; Gemini takes function tools only.`,
    "tool_choice.type",
  );
}

/** `generationConfig` from the sampling, length, format, logprob and reasoning parameters. */
function generationConfigOf(body: JsonObject, context: TranslationContext): JsonObject {
  const config: JsonObject = {};
  const set = (name: string, value: unknown) => {
    if (isSet(value)) config[name] = value;
  };
  set("maxOutputTokens", body.max_completion_tokens ?? body.max_tokens);
  set("temperature", body.temperature);
  set("topP", body.top_p);
  if (isSet(body.stop)) {
    const stops = typeof body.stop === "string" ? [body.stop] : asArray(body.stop, "stop");
    if (stops.length > 0) config.stopSequences = stops.map((stop, i) => asString(stop, `stop[${i}]`));
  }
  set("candidateCount", body.n);
  set("seed", body.seed);
  set("presencePenalty", body.presence_penalty);
  set("frequencyPenalty", body.frequency_penalty);
  if (body.logprobs === true) config.responseLogprobs = true;
  if (typeof body.top_logprobs === "number" && body.top_logprobs > 0) config.logprobs = body.top_logprobs;
  Object.assign(config, responseFormatConfig(optionalObject(body.response_format, "response_format")));
  if (context.reasoning !== undefined) {
    config.thinkingConfig = { thinkingBudget: geminiThinkingBudgets[context.reasoning] };
  }
  return config;
}

/** `responseMimeType` (and the full schema as `responseJsonSchema`) for a response format. */
function responseFormatConfig(format: JsonObject | undefined): JsonObject {
  switch (format?.type) {
    case undefined:
    case "text":
      return {};
    case "json_object":
      return { responseMimeType: "application/json" };
    case "json_schema": {
      const jsonSchema = asObject(format.json_schema, "response_format.json_schema");
      const config: JsonObject = { responseMimeType: "application/json" };
      if (isSet(jsonSchema.schema)) config.responseJsonSchema = jsonSchema.schema;
      return config;
    }
    default:
      throw invalidRequest("'response_format.type' must be text, json_object or json_schema.", "response_format.type");
  }
}

// ---------------------------------------------------------------------------------------------
// Answer

type FinishReason = ChatCompletion.Choice["finish_reason"];

/** Gemini finish reasons that mean content was withheld by a filter. */
const filterReasons = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
]);

/** A Gemini finish reason in Chat Completions terms; a call that ends by calling tools is `tool_calls`. */
function finishReasonOf(reason: unknown, calledTools: boolean): FinishReason {
  if (reason === "MAX_TOKENS") return "length";
  if (typeof reason === "string" && filterReasons.has(reason)) return "content_filter";
  return calledTools ? "tool_calls" : "stop";
}

/** A chat object as the wire body the translation hands back. */
function wireObject(value: ChatCompletion | ChatCompletionChunk): JsonObject {
  return value as unknown as JsonObject;
}

/** The objects of a JSON array member; anything else is none. */
function objectsOf(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function candidatesOf(native: JsonObject): JsonObject[] {
  return objectsOf(native.candidates);
}

/** Whether Gemini refused the prompt itself (no candidates, a block reason). */
function promptBlocked(native: JsonObject): boolean {
  return isObject(native.promptFeedback) && isSet(native.promptFeedback.blockReason);
}

/** A candidate's index: its own, else its position. */
function indexOf(candidate: JsonObject, position: number): number {
  return typeof candidate.index === "number" ? candidate.index : position;
}

function partsOf(candidate: JsonObject): JsonObject[] {
  return isObject(candidate.content) ? objectsOf(candidate.content.parts) : [];
}

/** The answer text of parts: their non-thought text joined; undefined when there is none. */
function answerText(parts: JsonObject[]): string | undefined {
  const texts = parts.filter((part) => typeof part.text === "string" && part.thought !== true);
  return texts.length === 0 ? undefined : texts.map((part) => part.text as string).join("");
}

/** The function calls among parts, as their name and arguments. */
function functionCallsOf(parts: JsonObject[]): { name: string; args: unknown }[] {
  return parts.flatMap((part) => {
    if (!isObject(part.functionCall)) return [];
    const { name, args } = part.functionCall;
    return [{ name: typeof name === "string" ? name : "", args: args ?? {} }];
  });
}

/** A deterministic tool call id: unique per answer (its id), choice and call. */
function toolCallId(context: TranslationContext, choice: number, call: number): string {
  const stem = context.id.replace(/^chatcmpl-/, "").replace(/[^A-Za-z0-9]/g, "");
  return `call_${stem}_${choice}_${call}`;
}

function toolCall(
  context: TranslationContext,
  choice: number,
  call: number,
  { name, args }: { name: string; args: unknown },
): ChatCompletionMessageFunctionToolCall {
  return {
    id: toolCallId(context, choice, call),
    type: "function",
    function: { name, arguments: JSON.stringify(args) },
  };
}

const utf8 = new TextEncoder();

/** Gemini's `logprobsResult` as Chat Completions logprobs; null when the candidate has none. */
function logprobsOf(result: unknown): ChatCompletion.Choice.Logprobs | null {
  if (!isObject(result) || !Array.isArray(result.chosenCandidates)) return null;
  const top = Array.isArray(result.topCandidates) ? result.topCandidates : [];
  const token = (candidate: JsonObject) => {
    const text = typeof candidate.token === "string" ? candidate.token : "";
    const logprob = typeof candidate.logProbability === "number" ? candidate.logProbability : 0;
    return { token: text, bytes: [...utf8.encode(text)], logprob };
  };
  const content = result.chosenCandidates.flatMap((chosen, i): ChatCompletionTokenLogprob[] => {
    if (!isObject(chosen)) return [];
    const alternatives = isObject(top[i]) ? objectsOf(top[i].candidates) : [];
    return [{ ...token(chosen), top_logprobs: alternatives.map(token) }];
  });
  return { content, refusal: null };
}

/** A whole number of tokens, or 0. */
const tokens = (value: unknown) => (typeof value === "number" ? value : 0);

/** Chat Completions usage from Gemini's `usageMetadata`: thoughts count as completion (reasoning) tokens. */
function usageOf(metadata: unknown): CompletionUsage | undefined {
  if (!isObject(metadata)) return undefined;
  const prompt = tokens(metadata.promptTokenCount) + tokens(metadata.toolUsePromptTokenCount);
  const completion = tokens(metadata.candidatesTokenCount) + tokens(metadata.thoughtsTokenCount);
  const usage: CompletionUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof metadata.totalTokenCount === "number" ? metadata.totalTokenCount : prompt + completion,
  };
  if (typeof metadata.thoughtsTokenCount === "number") {
    usage.completion_tokens_details = { reasoning_tokens: metadata.thoughtsTokenCount };
  }
  if (typeof metadata.cachedContentTokenCount === "number") {
    usage.prompt_tokens_details = { cached_tokens: metadata.cachedContentTokenCount };
  }
  return usage;
}

/** One choice of a whole answer from one candidate. */
function choiceOf(candidate: JsonObject, position: number, context: TranslationContext): ChatCompletion.Choice {
  const index = indexOf(candidate, position);
  const parts = partsOf(candidate);
  const calls = functionCallsOf(parts).map((call, k) => toolCall(context, index, k, call));
  return {
    index,
    message: {
      role: "assistant",
      content: answerText(parts) ?? null,
      refusal: null,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    },
    finish_reason: finishReasonOf(candidate.finishReason, calls.length > 0),
    logprobs: logprobsOf(candidate.logprobsResult),
  };
}

/** The choice of an answer without candidates: filtered when Gemini blocked the prompt. */
function emptyChoice(native: JsonObject): ChatCompletion.Choice {
  return {
    index: 0,
    message: { role: "assistant", content: null, refusal: null },
    finish_reason: promptBlocked(native) ? "content_filter" : "stop",
    logprobs: null,
  };
}

/** The `chat.completion` for a whole `generateContent` answer. */
function chatCompletion(native: JsonObject, context: TranslationContext): ChatCompletion {
  const candidates = candidatesOf(native);
  const usage = usageOf(native.usageMetadata);
  return {
    id: context.id,
    object: "chat.completion",
    created: context.created,
    model: context.publicModel,
    choices:
      candidates.length === 0
        ? [emptyChoice(native)]
        : candidates.map((candidate, position) => choiceOf(candidate, position, context)),
    ...(usage === undefined ? {} : { usage }),
  };
}

// ---------------------------------------------------------------------------------------------
// Stream

/** What a stream translator keeps of one choice. */
interface ChoiceState {
  /** Tool calls sent so far (the next one's index). */
  toolCalls: number;
  finished: boolean;
}

/**
 * Turns `streamGenerateContent?alt=sse` events into chunks: a choice opens with an assistant role
 * delta, text arrives as content deltas, each function call whole in one tool call delta, and the
 * finish reason in a chunk of its own. With `include_usage`, every chunk carries `usage: null` and
 * `end()` adds the usage chunk from the last `usageMetadata`.
 */
function chunkTranslator(context: TranslationContext, includeUsage: boolean): ChatStreamTranslator {
  const choices = new Map<number, ChoiceState>();
  let usage: CompletionUsage | undefined;

  const chunk = (choice: ChatCompletionChunk.Choice[]): ChatCompletionChunk => ({
    id: context.id,
    object: "chat.completion.chunk",
    created: context.created,
    model: context.publicModel,
    choices: choice,
    ...(includeUsage ? { usage: null } : {}),
  });
  const delta = (
    index: number,
    change: ChatCompletionChunk.Choice.Delta,
    finishReason: FinishReason | null = null,
    logprobs: ChatCompletionChunk.Choice.Logprobs | null = null,
  ): ChatCompletionChunk => chunk([{ index, delta: change, finish_reason: finishReason, logprobs }]);

  /** The state of a choice, opening it (with its role chunk) the first time. */
  const open = (index: number, out: ChatCompletionChunk[]): ChoiceState => {
    let state = choices.get(index);
    if (state === undefined) {
      state = { toolCalls: 0, finished: false };
      choices.set(index, state);
      out.push(delta(index, { role: "assistant", content: "" }));
    }
    return state;
  };

  const finish = (index: number, state: ChoiceState, reason: FinishReason, out: ChatCompletionChunk[]) => {
    state.finished = true;
    out.push(delta(index, {}, reason));
  };

  const candidateChunks = (candidate: JsonObject, position: number, out: ChatCompletionChunk[]) => {
    const index = indexOf(candidate, position);
    const state = open(index, out);
    if (state.finished) return;
    const parts = partsOf(candidate);
    const text = answerText(parts);
    if (text !== undefined && text !== "")
      out.push(delta(index, { content: text }, null, logprobsOf(candidate.logprobsResult)));
    const calls = functionCallsOf(parts);
    if (calls.length > 0) {
      const toolCalls = calls.map((call, offset) => {
        const k = state.toolCalls + offset;
        return { index: k, ...toolCall(context, index, k, call) };
      });
      state.toolCalls += calls.length;
      out.push(delta(index, { tool_calls: toolCalls }));
    }
    const reason = candidate.finishReason;
    if (typeof reason === "string" && reason !== "" && reason !== "FINISH_REASON_UNSPECIFIED") {
      finish(index, state, finishReasonOf(reason, state.toolCalls > 0), out);
    }
  };

  return {
    event(native) {
      usage = usageOf(native.usageMetadata) ?? usage;
      const out: ChatCompletionChunk[] = [];
      const candidates = candidatesOf(native);
      if (candidates.length === 0 && promptBlocked(native)) {
        const state = open(0, out);
        if (!state.finished) finish(0, state, "content_filter", out);
      }
      for (const [position, candidate] of candidates.entries()) candidateChunks(candidate, position, out);
      return out.map(wireObject);
    },
    end() {
      const out: ChatCompletionChunk[] = [];
      // A stream that ended without a finish reason still closes each choice it opened.
      for (const [index, state] of choices) {
        if (!state.finished) finish(index, state, state.toolCalls > 0 ? "tool_calls" : "stop", out);
      }
      if (includeUsage) {
        out.push({ ...chunk([]), usage: usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
      }
      return out.map(wireObject);
    },
  };
}
