import type { RawMessageStreamEvent, TextBlock, ToolUseBlock, Usage } from "@anthropic-ai/sdk/resources/messages";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import {
  isJsonObject,
  isNonEmptyString,
  type JsonObject,
  lastTurn,
  lastUserText,
} from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { idAlphabets, idFromDigest, seedFromDigest } from "../../../simulated/request-digest.js";
import { findRequestProblem, type RequestProblem, type RequiredField } from "../../../simulated/request-problem.js";
import { eventFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";
import { type DeclaredTool, declaredTools, simulatedToolCall, type ToolChoice } from "../../../simulated/tool-call.js";

const isPositiveInteger = (value: unknown): boolean =>
  typeof value === "number" && Number.isInteger(value) && value > 0;

const countFields: RequiredField[] = [
  { field: "model", expected: "a non-empty string", check: isNonEmptyString },
  { field: "messages", expected: "an array", check: Array.isArray },
];
const messageFields: RequiredField[] = [
  ...countFields,
  { field: "max_tokens", expected: "a positive integer", check: isPositiveInteger },
];

/** The first problem with a Messages body, if any. */
export function messagesRequestProblem(body: JsonObject): RequestProblem | undefined {
  return findRequestProblem(body, messageFields);
}

/** The first problem with a `count_tokens` body (which takes no `max_tokens`), if any. */
export function countTokensRequestProblem(body: JsonObject): RequestProblem | undefined {
  return findRequestProblem(body, countFields);
}

/** The stated estimate of a Messages prompt: system, messages and tools. */
export function estimateMessagesTokens(body: JsonObject): number {
  return estimatePromptTokens(body.system, body.messages, body.tools);
}

/**
 * The usage members the API sends. The SDK's `Usage` type also declares members the API leaves out
 * (`inference_geo`, `server_tool_use`, …); a strict client refuses them as `null`, so they are not sent.
 */
type WireUsage = Pick<
  Usage,
  "input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens" | "service_tier"
> & { cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } };

/** A text block as the API sends it: `citations` only when there are any. */
type WireTextBlock = Omit<TextBlock, "citations">;
type WireToolUseBlock = Omit<ToolUseBlock, "caller">;

/** A `message` as the API sends it, without the members its SDK type adds as `null`. */
interface WireMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: (WireTextBlock | WireToolUseBlock)[];
  stop_reason: "end_turn" | "tool_use" | null;
  stop_sequence: null;
  usage: WireUsage;
}

/**
 * A simulated Messages answer: a `message`, or its event stream when `stream` is set; a `tool_use`
 * block instead of text where `simulatedToolCall` decides on one.
 */
export function simulateMessage({ body, digest }: JsonBody): Response {
  const seed = seedFromDigest(digest);
  const userText = lastUserText(body.messages, "content", "text");
  const call = simulatedToolCall({
    tools: declaredTools(body.tools, messagesTool),
    choice: toolChoiceOf(body.tool_choice),
    endsWithToolResult: endsWithToolResult(body.messages),
    lastUserText: userText,
    seed,
  });
  const block: WireTextBlock | WireToolUseBlock =
    call === undefined
      ? {
          type: "text",
          text: simulatedAnswer({ lastUserText: userText, format: answerFormat(body.output_config), seed }),
        }
      : {
          type: "tool_use",
          id: `toolu_01${idFromDigest(digest, 22, idAlphabets.base58, 22)}`,
          name: call.name,
          input: JSON.parse(call.arguments) as unknown,
        };
  const message: WireMessage = {
    id: `msg_01${idFromDigest(digest, 22, idAlphabets.base58)}`,
    type: "message",
    role: "assistant",
    model: String(body.model),
    content: [block],
    stop_reason: block.type === "text" ? "end_turn" : "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: estimateMessagesTokens(body),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: estimateTokens(block.type === "text" ? block.text : `${call?.name}${call?.arguments}`),
      service_tier: "standard",
    },
  };
  if (body.stream !== true) return Response.json(message);
  return sseResponse(streamEvents(message, block, call?.arguments ?? "").map((event) => eventFrame(event.type, event)));
}

/** A client tool: `{name, input_schema}`, with no `type` or `type: "custom"` (server tools have their own). */
function messagesTool(tool: JsonObject): DeclaredTool | undefined {
  if ((tool.type !== undefined && tool.type !== "custom") || typeof tool.name !== "string") return undefined;
  return { name: tool.name, parameters: tool.input_schema };
}

/** `tool_choice`: `{type: "auto" | "any" | "none"}` or `{type: "tool", name}`. */
function toolChoiceOf(choice: unknown): ToolChoice {
  if (!isJsonObject(choice)) return { kind: "auto" };
  if (choice.type === "none") return { kind: "none" };
  if (choice.type === "any") return { kind: "any" };
  if (choice.type === "tool" && typeof choice.name === "string") return { kind: "named", name: choice.name };
  return { kind: "auto" };
}

/** Whether the last message hands back a tool's result (`tool_result` blocks). */
function endsWithToolResult(messages: unknown): boolean {
  const content = lastTurn(messages)?.content;
  return Array.isArray(content) && content.some((block) => isJsonObject(block) && block.type === "tool_result");
}

/** An event of the stream, as the API sends it; the SDK's event types declare the members it adds as `null`. */
type WireStreamEvent = { type: RawMessageStreamEvent["type"] | "ping" } & JsonObject;

/** The Messages event sequence for one content block, with the `ping` the API sends after the block starts. */
function streamEvents(message: WireMessage, block: WireTextBlock | WireToolUseBlock, args: string): WireStreamEvent[] {
  const deltas: WireStreamEvent[] =
    block.type === "text"
      ? textDeltas(block.text).map((text) => ({
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text },
        }))
      : textDeltas(args).map((partial_json) => ({
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta", partial_json },
        }));
  return [
    {
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
    },
    {
      type: "content_block_start",
      index: 0,
      content_block: block.type === "text" ? { ...block, text: "" } : { ...block, input: {} },
    },
    { type: "ping" },
    ...deltas,
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    },
    { type: "message_stop" },
  ];
}

function answerFormat(outputConfig: unknown): AnswerFormat {
  if (!isJsonObject(outputConfig) || !isJsonObject(outputConfig.format)) return { kind: "text" };
  const { format } = outputConfig;
  if (format.type !== "json_schema" || format.schema === undefined) return { kind: "text" };
  return { kind: "json-schema", schema: format.schema };
}
