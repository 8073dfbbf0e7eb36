/**
 * An independent oracle of the README's "What is counted": the code points of every string and
 * every object key of a request body, leaving out each surface's closed list of parameters, the
 * values of closed vocabularies that are in their set, and binary media payloads, and counting
 * text-like inline data as its decoded text. Written from the README alone; it shares no code with
 * the gateway's measuring code.
 *
 * It is deliberately simpler than the gateway (no compact JSON, no per-category split): the
 * property that uses it allows the gateway to count MORE, and to count LESS only by the keys of
 * known fields (which the gateway is free not to count).
 */

export type Path = ReadonlyArray<string | number>;
export type JsonObject = { [key: string]: Json };
export type Json = null | boolean | number | string | Json[] | JsonObject;

/** What the oracle does with one member `key` of an object. */
export type Decision =
  /** key and value count (the value recursively). */
  | "count"
  /** a closed-list field: neither key nor value counts. */
  | "closed"
  /** a closed-vocabulary value in its set: the key counts, the value not. */
  | "vocab"
  /** a binary media payload (base64 data, a media URL): the key counts, the value not. */
  | "payload"
  /** text-like inline data: the key counts, and the decoded text instead of the value. */
  | { decoded: string };

export interface SurfaceRules {
  surface: string;
  decide(path: Path, key: string, value: Json, parent: JsonObject): Decision;
  /** Names of fields the surface knows; only their keys are allowed as slack. */
  knownKeys: ReadonlySet<string>;
}

/** Code points of a string; a lone surrogate counts as one. */
export function codePoints(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        index++;
      }
    }
  }
  return count;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface OracleCount {
  /** Code points the oracle counts. */
  chars: number;
  /** Code points of the counted keys that name known fields: the allowed slack. */
  knownKeyChars: number;
}

/** The oracle's count of a parsed body under a surface's rules. */
export function oracleCount(body: unknown, rules: SurfaceRules): OracleCount {
  const result = { chars: 0, knownKeyChars: 0 };
  walk(body as Json, [], rules, result);
  return result;
}

function walk(value: Json, path: Path, rules: SurfaceRules, into: OracleCount): void {
  if (typeof value === "string") {
    into.chars += codePoints(value);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      walk(item, [...path, index], rules, into);
    });
  } else if (isObject(value)) {
    for (const [key, member] of Object.entries(value)) {
      const decision = rules.decide(path, key, member, value);
      if (decision === "closed") continue;
      const keyChars = codePoints(key);
      into.chars += keyChars;
      if (rules.knownKeys.has(key)) into.knownKeyChars += keyChars;
      if (decision === "count") walk(member, [...path, key], rules, into);
      else if (typeof decision === "object") into.chars += codePoints(decision.decoded);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Media

const binaryMedia = /^(image|audio|video)\/|^application\/pdf$/i;

/** Whether a media type is binary media (image, audio, video, PDF). */
export function isBinaryMediaType(mediaType: string): boolean {
  return binaryMedia.test(mediaType.trim());
}

/** The README's vocabulary of media types: `type/subtype`. */
export function isMediaTypeForm(value: unknown): boolean {
  return (
    typeof value === "string" && /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/.test(value)
  );
}

/** Decodes base64 into UTF-8 text; undefined when it is not UTF-8 (then the encoded form counts). */
export function decodeBase64Text(data: string): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(data, "base64"));
  } catch {
    return undefined;
  }
}

/** An inline payload of a given media type (undefined: no type): binary → payload, else decoded text. */
export function inlineDecision(mediaType: unknown, data: Json): Decision {
  if (typeof data !== "string") return "count";
  if (typeof mediaType === "string" && isBinaryMediaType(mediaType)) return "payload";
  const text = decodeBase64Text(data);
  return text === undefined ? "count" : { decoded: text };
}

const extensionTypes: Record<string, string> = {
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  wav: "audio/wav",
  mp3: "audio/mpeg",
  mp4: "video/mp4",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  json: "application/json",
  xml: "application/xml",
  html: "text/html",
};

/**
 * OpenAI `file_data`: a data URL names its type; raw base64 takes the type of the file name's
 * extension (README). Binary → payload; text-like → decoded text.
 */
export function fileDataDecision(fileData: Json, filename: unknown): Decision {
  if (typeof fileData !== "string") return "count";
  const dataUrl = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(fileData);
  if (dataUrl) {
    const mediaType = dataUrl[1] ?? "";
    const isBase64 = (dataUrl[2] ?? "").split(";").includes("base64");
    if (isBinaryMediaType(mediaType)) return "payload";
    if (!isBase64) return { decoded: decodeURIComponent(dataUrl[3] ?? "") };
    return inlineDecision(mediaType === "" ? undefined : mediaType, dataUrl[3] ?? "");
  }
  const extension = typeof filename === "string" ? /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase() : undefined;
  const mediaType = extension ? extensionTypes[extension] : undefined;
  return inlineDecision(mediaType, fileData);
}

// ---------------------------------------------------------------------------------------------
// Helpers for the rules

function last(path: Path, back = 1): string | number | undefined {
  return path[path.length - back];
}

/** Gemini names in either spelling, as camelCase. */
export function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

function set(...names: string[]): ReadonlySet<string> {
  return new Set(names);
}

const commonTypes = [
  "text",
  "image",
  "image_url",
  "input_audio",
  "audio",
  "file",
  "refusal",
  "function",
  "json_schema",
  "json_object",
  "content",
  "custom",
  "grammar",
  "input_text",
  "input_image",
  "input_file",
  "output_text",
  "output_audio",
  "message",
  "function_call",
  "function_call_output",
  "reasoning",
  "summary_text",
  "reasoning_text",
  "item_reference",
  "web_search_call",
  "web_search",
  "web_search_preview",
  "web_search_2025_08_26",
  "file_search",
  "file_search_call",
  "computer_use_preview",
  "computer_call",
  "computer_call_output",
  "computer_screenshot",
  "code_interpreter",
  "code_interpreter_call",
  "image_generation",
  "image_generation_call",
  "local_shell",
  "local_shell_call",
  "local_shell_call_output",
  "shell",
  "shell_call",
  "shell_call_output",
  "apply_patch",
  "apply_patch_call",
  "apply_patch_call_output",
  "mcp",
  "mcp_call",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "custom_tool_call",
  "custom_tool_call_output",
  "allowed_tools",
  "compaction",
  "search",
  "open_page",
  "find",
  "find_in_page",
  "url_citation",
  "file_citation",
  "container_file_citation",
  "file_path",
  "logs",
  "auto",
  "any",
  "tool",
  "none",
  "required",
  "document",
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "search_result",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "mcp_tool_use",
  "mcp_tool_result",
  "container_upload",
  "base64",
  "url",
  "enabled",
  "disabled",
  "ephemeral",
  "char_location",
  "page_location",
  "content_block_location",
  "web_search_result_location",
  "search_result_location",
  "web_search_result",
];
const types = new Set(commonTypes);
const roles = set("system", "developer", "user", "assistant", "tool", "function", "model");
const details = set("auto", "low", "high", "original");
const audioFormats = set("wav", "mp3", "flac", "opus", "pcm16", "aac");
const statuses = set("in_progress", "completed", "incomplete", "searching", "failed", "interpreting", "generating");
const phases = set("commentary", "final_answer");
const toolChoiceModes = set("none", "auto", "required");

/** Vocabularies common to the OpenAI surfaces and Anthropic. */
function commonVocab(key: string, value: Json): boolean {
  if (typeof value !== "string") return false;
  switch (key) {
    case "role":
      return roles.has(value);
    case "type":
      return types.has(value);
    case "detail":
      return details.has(value);
    case "status":
      return statuses.has(value);
    case "phase":
      return phases.has(value);
    case "media_type":
    case "mime_type":
    case "mimeType":
      return isMediaTypeForm(value);
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

const chatClosed = set(
  "model",
  "stream",
  "stream_options",
  "temperature",
  "top_p",
  "n",
  "max_tokens",
  "max_completion_tokens",
  "frequency_penalty",
  "presence_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "seed",
  "stop",
  "store",
  "metadata",
  "user",
  "safety_identifier",
  "service_tier",
  "parallel_tool_calls",
  "reasoning_effort",
  "verbosity",
  "modalities",
  "audio",
  "moderation",
  "prompt_cache_key",
  "prompt_cache_options",
  "prompt_cache_retention",
);

/** Whether a path is a content part: messages[i].content[j] (Chat) or a Responses item's content[j]. */
function isContentPart(path: Path): boolean {
  return typeof last(path) === "number" && last(path, 2) === "content";
}

export const openaiChatRules: SurfaceRules = {
  surface: "openai-chat",
  decide(path, key, value, parent) {
    if (path.length === 0) {
      if (chatClosed.has(key)) return "closed";
      if (key === "tool_choice" && typeof value === "string" && toolChoiceModes.has(value)) return "vocab";
    }
    if (key === "prompt_cache_breakpoint" && isContentPart(path)) return "closed";
    if (path.length === 2 && path[0] === "response_format" && path[1] === "json_schema" && key === "strict")
      return "closed";
    if (last(path) === "image_url" && key === "url") return "payload";
    if (last(path) === "input_audio") {
      if (key === "data") return "payload";
      if (key === "format" && typeof value === "string" && audioFormats.has(value)) return "vocab";
    }
    if (last(path) === "file" && key === "file_data") return fileDataDecision(value, parent.filename);
    return commonVocab(key, value) ? "vocab" : "count";
  },
  knownKeys: set(
    ...chatClosed,
    "messages",
    "role",
    "content",
    "name",
    "type",
    "text",
    "image_url",
    "url",
    "detail",
    "input_audio",
    "data",
    "format",
    "file",
    "file_data",
    "file_id",
    "filename",
    "refusal",
    "tool_calls",
    "id",
    "function",
    "arguments",
    "tool_call_id",
    "function_call",
    "tools",
    "description",
    "parameters",
    "strict",
    "tool_choice",
    "response_format",
    "json_schema",
    "schema",
    "prediction",
    "web_search_options",
    "functions",
    "annotations",
    "custom",
    "input",
    "prompt_cache_breakpoint",
  ),
};

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

const responsesClosed = set(
  "model",
  "stream",
  "stream_options",
  "background",
  "store",
  "temperature",
  "top_p",
  "top_logprobs",
  "max_output_tokens",
  "max_tool_calls",
  "parallel_tool_calls",
  "truncation",
  "include",
  "metadata",
  "user",
  "safety_identifier",
  "service_tier",
  "moderation",
  "multi_agent",
  "personality",
  "context_management",
  "prompt_cache_key",
  "prompt_cache_options",
  "prompt_cache_retention",
);
const reasoningClosed = set("effort", "summary", "generate_summary", "context", "mode");

export const openaiResponsesRules: SurfaceRules = {
  surface: "openai-responses",
  decide(path, key, value, parent) {
    if (path.length === 0) {
      if (responsesClosed.has(key)) return "closed";
      if (key === "tool_choice" && typeof value === "string" && toolChoiceModes.has(value)) return "vocab";
    }
    if (path.length === 1 && path[0] === "reasoning" && reasoningClosed.has(key)) return "closed";
    if (path.length === 1 && path[0] === "text" && key === "verbosity") return "closed";
    if (path.length === 2 && path[0] === "text" && path[1] === "format" && key === "strict") return "closed";
    if (path.length === 1 && path[0] === "prompt" && key === "version") return "closed";
    if (key === "prompt_cache_breakpoint" && isContentPart(path)) return "closed";
    if (key === "logprobs" && parent.type === "output_text") return "closed";
    if (parent.type === "input_image" && key === "image_url") return "payload";
    if (parent.type === "input_file" && key === "file_data") return fileDataDecision(value, parent.filename);
    if (last(path) === "input_audio") {
      if (key === "data") return "payload";
      if (key === "format" && typeof value === "string" && audioFormats.has(value)) return "vocab";
    }
    return commonVocab(key, value) ? "vocab" : "count";
  },
  knownKeys: set(
    ...responsesClosed,
    "input",
    "instructions",
    "role",
    "content",
    "type",
    "text",
    "image_url",
    "detail",
    "file_id",
    "file_data",
    "file_url",
    "filename",
    "input_audio",
    "data",
    "format",
    "id",
    "status",
    "phase",
    "annotations",
    "logprobs",
    "refusal",
    "call_id",
    "name",
    "arguments",
    "output",
    "summary",
    "encrypted_content",
    "action",
    "query",
    "queries",
    "sources",
    "url",
    "pattern",
    "tools",
    "description",
    "parameters",
    "strict",
    "tool_choice",
    "reasoning",
    "effort",
    "generate_summary",
    "context",
    "mode",
    "verbosity",
    "schema",
    "prompt",
    "version",
    "variables",
    "previous_response_id",
    "conversation",
    "prompt_cache_breakpoint",
  ),
};

// ---------------------------------------------------------------------------------------------
// Gemini (camelCase or snake_case)

const geminiTopClosed = set(
  "model",
  "safetySettings",
  "labels",
  "serviceTier",
  "store",
  "routingConfig",
  "modelSelectionConfig",
  "audioTimestamp",
  "modelArmorConfig",
  "generationOutputConfig",
);
const geminiGenerationClosed = set(
  "temperature",
  "topP",
  "topK",
  "candidateCount",
  "maxOutputTokens",
  "stopSequences",
  "responseLogprobs",
  "logprobs",
  "presencePenalty",
  "frequencyPenalty",
  "seed",
  "responseMimeType",
  "responseModalities",
  "mediaResolution",
  "enableEnhancedCivicAnswers",
  "thinkingConfig",
  "speechConfig",
  "imageConfig",
  "audioTimestamp",
  "enableAffectiveDialog",
  "routingConfig",
  "modelSelectionConfig",
  "translationConfig",
);
const geminiPartClosed = set("thought", "videoMetadata", "mediaResolution", "mediaProcessing");
const geminiLanguages = set("PYTHON", "LANGUAGE_UNSPECIFIED");
const geminiOutcomes = set("OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED", "OUTCOME_UNSPECIFIED");

function isGeminiPart(path: Path): boolean {
  const parent = last(path, 2);
  return typeof last(path) === "number" && typeof parent === "string" && camel(parent) === "parts";
}

function geminiKnown(): ReadonlySet<string> {
  const camelNames = [
    ...geminiTopClosed,
    ...geminiGenerationClosed,
    ...geminiPartClosed,
    "contents",
    "role",
    "parts",
    "text",
    "inlineData",
    "mimeType",
    "data",
    "fileData",
    "fileUri",
    "displayName",
    "functionCall",
    "functionResponse",
    "name",
    "args",
    "id",
    "response",
    "willContinue",
    "scheduling",
    "executableCode",
    "language",
    "code",
    "codeExecutionResult",
    "outcome",
    "output",
    "thoughtSignature",
    "systemInstruction",
    "tools",
    "functionDeclarations",
    "description",
    "parameters",
    "parametersJsonSchema",
    "response",
    "responseJsonSchema",
    "googleSearch",
    "googleSearchRetrieval",
    "codeExecution",
    "urlContext",
    "toolConfig",
    "functionCallingConfig",
    "mode",
    "allowedFunctionNames",
    "streamFunctionCallArguments",
    "retrievalConfig",
    "includeServerSideToolInvocations",
    "generationConfig",
    "responseSchema",
    "cachedContent",
    "category",
    "threshold",
    "thinkingBudget",
    "includeThoughts",
  ];
  const names = new Set<string>();
  for (const name of camelNames) {
    names.add(name);
    names.add(name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`));
  }
  return names;
}

export const geminiRules: SurfaceRules = {
  surface: "gemini",
  decide(path, key, value, parent) {
    const name = camel(key);
    const at = path.map((segment) => (typeof segment === "string" ? camel(segment) : segment));
    if (at.length === 0 && geminiTopClosed.has(name)) return "closed";
    if (at.length === 1 && at[0] === "generationConfig" && geminiGenerationClosed.has(name)) return "closed";
    if (
      at.length === 1 &&
      at[0] === "toolConfig" &&
      (name === "retrievalConfig" || name === "includeServerSideToolInvocations")
    )
      return "closed";
    if (
      at.length === 2 &&
      at[0] === "toolConfig" &&
      at[1] === "functionCallingConfig" &&
      (name === "mode" || name === "streamFunctionCallArguments")
    )
      return "closed";
    if (isGeminiPart(path) && geminiPartClosed.has(name)) return "closed";
    const holder = last(at);
    if (holder === "functionCall" && name === "willContinue") return "closed";
    if (holder === "functionResponse" && (name === "scheduling" || name === "willContinue")) return "closed";
    if (holder === "fileData" && name === "fileUri") return "closed";
    if (holder === "inlineData" && name === "data") return inlineDecision(parent.mimeType ?? parent.mime_type, value);
    if (typeof value === "string") {
      if (name === "role" && roles.has(value)) return "vocab";
      if (name === "language" && geminiLanguages.has(value)) return "vocab";
      if (name === "outcome" && geminiOutcomes.has(value)) return "vocab";
      if (name === "mimeType" && isMediaTypeForm(value)) return "vocab";
    }
    return "count";
  },
  knownKeys: geminiKnown(),
};

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const anthropicClosed = set(
  "model",
  "stream",
  "max_tokens",
  "temperature",
  "top_k",
  "top_p",
  "stop_sequences",
  "metadata",
  "service_tier",
  "thinking",
  "inference_geo",
  "speed",
  "diagnostics",
  "billing_policy",
  "fallbacks",
  "fallback_credit_token",
);

export const anthropicRules: SurfaceRules = {
  surface: "anthropic",
  decide(path, key, value, parent) {
    if (path.length === 0 && anthropicClosed.has(key)) return "closed";
    if (path.length === 1 && path[0] === "output_config" && key === "effort") return "closed";
    if (key === "cache_control") return "closed";
    if (key === "is_error" || key === "transformations") return "closed";
    if (key === "citations" && (parent.type === "document" || parent.type === "search_result")) return "closed";
    if (path.length === 1 && path[0] === "tool_choice" && key === "disable_parallel_tool_use") return "closed";
    if (path.length === 2 && path[0] === "system" && (key === "clear_at" || key === "output_config")) return "closed";
    if (path.length === 1 && path[0] === "container" && key === "id") return "closed";
    if (last(path) === "source") {
      if (parent.type === "base64" && key === "data") return inlineDecision(parent.media_type, value);
      if (parent.type === "url" && key === "url") return "payload";
    }
    return commonVocab(key, value) ? "vocab" : "count";
  },
  knownKeys: set(
    ...anthropicClosed,
    "system",
    "messages",
    "role",
    "content",
    "type",
    "text",
    "source",
    "media_type",
    "data",
    "url",
    "file_id",
    "title",
    "context",
    "citations",
    "enabled",
    "tool_use_id",
    "is_error",
    "id",
    "name",
    "input",
    "thinking",
    "signature",
    "budget_tokens",
    "cache_control",
    "ttl",
    "tools",
    "description",
    "input_schema",
    "tool_choice",
    "disable_parallel_tool_use",
    "output_config",
    "format",
    "schema",
    "effort",
    "user_id",
    "container",
    "mcp_servers",
  ),
};
