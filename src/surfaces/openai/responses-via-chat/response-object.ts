/*
 * The Responses `response` object as both the whole answer and the stream build it: how it ended,
 * the request's settings as the API echoes them, usage, times, output item ids and content parts.
 */

import type {
  FunctionTool,
  Response,
  ResponseFormatTextJSONSchemaConfig,
  ResponseOutputItem,
  ResponseOutputRefusal,
  ResponseOutputText,
  ResponseTextConfig,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { isObject, type JsonObject } from "../../../json/json-object.js";

/**
 * A response as the API sends it: `output_text` is the SDK's convenience, not a wire member; `store`
 * is echoed, though the SDK's type does not declare it; `usage` is `null` until the response ends.
 */
export type WireResponse = Omit<Response, "output_text" | "usage" | "user" | "text"> & {
  store: boolean;
  usage: ResponseUsage | null;
  user: string | null;
  text: WireTextConfig;
  /** Sent by the API, not declared by this SDK version's type. */
  max_tool_calls: number | null;
};

/** `text` as the API echoes it: a schema format's `description` is `null` when the request gave none. */
type WireTextConfig = Omit<ResponseTextConfig, "format"> & {
  format?:
    | Exclude<ResponseTextConfig["format"], ResponseFormatTextJSONSchemaConfig>
    | (Omit<ResponseFormatTextJSONSchemaConfig, "description"> & { description: string | null });
};

/** How a response ended, or that it is still running. */
export interface Outcome {
  status: "in_progress" | "completed" | "incomplete";
  reason?: "max_output_tokens" | "content_filter";
}

/** A Chat Completions `finish_reason` as the response's status: cut short by the length limit or a filter, or complete. */
export function outcomeOf(finishReason: unknown): Outcome {
  if (finishReason === "length") return { status: "incomplete", reason: "max_output_tokens" };
  if (finishReason === "content_filter") return { status: "incomplete", reason: "content_filter" };
  return { status: "completed" };
}

/** What a response reports besides the request: its id, times, model, output and usage. */
export interface Generated extends Outcome {
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

export function numberOr<T>(value: unknown, otherwise: T): number | T {
  return typeof value === "number" ? value : otherwise;
}

export function stringOr<T>(value: unknown, otherwise: T): string | T {
  return typeof value === "string" ? value : otherwise;
}

/** The values the response's type allows for the echoed verbosity and reasoning effort. */
const verbosities = ["low", "medium", "high"] as const;
const efforts = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

/** `text` as the response echoes it: the format asked for (plain text by default) and the verbosity, if any. */
function echoedText(request: JsonObject): WireTextConfig {
  const text = isObject(request.text) ? request.text : {};
  const format = isObject(text.format) ? text.format : {};
  const verbosity = verbosities.find((level) => level === text.verbosity);
  const echo: WireTextConfig = verbosity === undefined ? {} : { verbosity };
  if (format.type === "json_object") return { format: { type: "json_object" }, ...echo };
  if (format.type !== "json_schema") return { format: { type: "text" }, ...echo };
  const schema = {
    type: "json_schema" as const,
    name: String(format.name),
    schema: isObject(format.schema) ? format.schema : {},
    description: stringOr(format.description, null),
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
export function responseOf(request: JsonObject, generated: Generated): WireResponse {
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
    max_tool_calls: numberOr(request.max_tool_calls, null),
    model: generated.model,
    output: generated.output,
    parallel_tool_calls: request.parallel_tool_calls !== false,
    previous_response_id: null,
    prompt_cache_key: stringOr(request.prompt_cache_key, null),
    reasoning: { effort: efforts.find((effort) => effort === reasoning.effort) ?? null, summary: null },
    safety_identifier: stringOr(request.safety_identifier, null),
    service_tier: "default",
    // Kept by the gateway (as its session's turn) unless the request asked otherwise.
    store: request.store !== false,
    // The sampling settings in effect: the request's, else the API's defaults.
    temperature: numberOr(request.temperature, 1),
    text: echoedText(request),
    tool_choice: echoedToolChoice(request.tool_choice),
    tools: echoedTools(request),
    top_logprobs: numberOr(request.top_logprobs, 0),
    top_p: numberOr(request.top_p, 1),
    truncation: "disabled",
    usage: generated.usage ?? null,
    user: stringOr(request.user, null),
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
export function usageOf(usage: unknown): ResponseUsage | undefined {
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
export function seconds(clock: () => number): number {
  return Math.floor(clock() / 1000);
}

/** An output item's id, made from the response's (`resp_…`) and the item's place in the output. */
export function itemId(prefix: string, responseId: string, outputIndex: number): string {
  const base = `${prefix}_${responseId.slice(5)}`;
  return outputIndex === 0 ? base : `${base}_${outputIndex}`;
}

export function textPart(text: string): ResponseOutputText {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function refusalPart(refusal: string): ResponseOutputRefusal {
  return { type: "refusal", refusal };
}
