import type {
  Message,
  MessageDeltaUsage,
  RawMessageStreamEvent,
  TextBlock,
  Usage,
} from "@anthropic-ai/sdk/resources/messages";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import { isJsonObject, isNonEmptyString, type JsonObject, lastUserText } from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { seedFromDigest } from "../../../simulated/request-digest.js";
import { findRequestProblem, type RequestProblem, type RequiredField } from "../../../simulated/request-problem.js";
import { eventFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";

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

/** A simulated Messages answer: a `message`, or its event stream when `stream` is set. */
export function simulateMessage({ body, digest }: JsonBody): Response {
  const text = simulatedAnswer({
    lastUserText: lastUserText(body.messages, "content", "text"),
    format: answerFormat(body.output_config),
    seed: seedFromDigest(digest),
  });
  const usage: Usage = {
    input_tokens: estimateMessagesTokens(body),
    output_tokens: estimateTokens(text),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: null,
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    speed: null,
  };
  const block: TextBlock = { type: "text", text, citations: null };
  const message: Message = {
    id: `msg_sim${digest.slice(0, 24)}`,
    type: "message",
    role: "assistant",
    model: String(body.model),
    content: [block],
    stop_reason: "end_turn",
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage,
  };
  if (body.stream !== true) return Response.json(message);
  return sseResponse(streamEvents(message, block).map((event) => eventFrame(event.type, event)));
}

/** The Messages event sequence for one text block. */
function streamEvents(message: Message, block: TextBlock): RawMessageStreamEvent[] {
  const { usage } = message;
  const deltaUsage: MessageDeltaUsage = {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    output_tokens_details: null,
    server_tool_use: null,
  };
  return [
    {
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    },
    { type: "content_block_start", index: 0, content_block: { ...block, text: "" } },
    ...textDeltas(block.text).map(
      (text): RawMessageStreamEvent => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
    ),
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null, stop_details: null, container: null },
      usage: deltaUsage,
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
