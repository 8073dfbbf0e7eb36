import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import {
  isJsonObject,
  isNonEmptyString,
  type JsonObject,
  lastTurn,
  lastUserText,
} from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { idAlphabets, idFromDigest, seedFromDigest, simulatedCreatedAt } from "../../../simulated/request-digest.js";
import { findRequestProblem, type RequestProblem, type RequiredField } from "../../../simulated/request-problem.js";
import { dataFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";
import {
  type DeclaredTool,
  declaredTools,
  type SimulatedToolCall,
  simulatedToolCall,
  type ToolChoice,
} from "../../../simulated/tool-call.js";

/** The backend configuration every simulated answer reports, in the API's `fp_` + 10 hex digits form. */
const simulatedFingerprint = "fp_5160a7ed00";

const requiredFields: RequiredField[] = [
  { field: "model", expected: "a non-empty string", check: isNonEmptyString },
  { field: "messages", expected: "an array", check: Array.isArray },
];

/** The first problem with a Chat Completions body, if any. */
export function chatRequestProblem(body: JsonObject): RequestProblem | undefined {
  return findRequestProblem(body, requiredFields);
}

/**
 * A simulated Chat Completions answer: a `chat.completion`, or its chunk stream when `stream` is
 * set; a tool call instead of text where `simulatedToolCall` decides on one.
 */
export function simulateChatCompletion({ body, digest }: JsonBody): Response {
  const model = String(body.model);
  const seed = seedFromDigest(digest);
  const userText = lastUserText(body.messages, "content", "text");
  const call = simulatedToolCall({
    tools: declaredTools(body.tools, chatTool),
    choice: toolChoiceOf(body.tool_choice),
    endsWithToolResult: lastTurn(body.messages)?.role === "tool",
    lastUserText: userText,
    seed,
  });
  const answer: ChatAnswer =
    call === undefined
      ? {
          kind: "text",
          text: simulatedAnswer({ lastUserText: userText, format: answerFormat(body.response_format), seed }),
        }
      : { kind: "call", call: { ...call, id: `call_${idFromDigest(digest, 24, idAlphabets.alphanumeric, 29)}` } };
  const promptTokens = estimatePromptTokens(body.messages, body.tools);
  const completionTokens = estimateTokens(
    answer.kind === "text" ? answer.text : answer.call.name + answer.call.arguments,
  );
  const usage: CompletionUsage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
  const id = `chatcmpl-${idFromDigest(digest, 29, idAlphabets.alphanumeric)}`;
  if (body.stream === true) {
    const includeUsage = isJsonObject(body.stream_options) && body.stream_options.include_usage === true;
    return sseResponse(chunkFrames({ id, model, answer, usage: includeUsage ? usage : undefined }));
  }
  const completion: ChatCompletion = {
    id,
    object: "chat.completion",
    created: simulatedCreatedAt,
    model,
    choices: [{ index: 0, message: messageOf(answer), finish_reason: finishReasonOf(answer), logprobs: null }],
    usage,
    service_tier: "default",
    system_fingerprint: simulatedFingerprint,
  };
  return Response.json(completion);
}

/** What the simulated model says: text, or one call of a declared tool. */
type ChatAnswer = { kind: "text"; text: string } | { kind: "call"; call: SimulatedToolCall & { id: string } };

function messageOf(answer: ChatAnswer): ChatCompletion.Choice["message"] {
  if (answer.kind === "text") return { role: "assistant", content: answer.text, refusal: null, annotations: [] };
  const { id, name, arguments: args } = answer.call;
  return {
    role: "assistant",
    content: null,
    refusal: null,
    annotations: [],
    tool_calls: [{ id, type: "function", function: { name, arguments: args } }],
  };
}

function finishReasonOf(answer: ChatAnswer): "stop" | "tool_calls" {
  return answer.kind === "text" ? "stop" : "tool_calls";
}

/** A declared function tool: `{type: "function", function: {name, parameters}}`. */
function chatTool(tool: JsonObject): DeclaredTool | undefined {
  const declared = tool.function;
  if (tool.type !== "function" || !isJsonObject(declared) || typeof declared.name !== "string") return undefined;
  return { name: declared.name, parameters: declared.parameters };
}

/** `tool_choice`: `none`, `auto`, `required`, or `{type: "function", function: {name}}`; shared with Responses. */
export function toolChoiceOf(choice: unknown): ToolChoice {
  if (choice === "none") return { kind: "none" };
  if (choice === "required") return { kind: "any" };
  if (isJsonObject(choice) && choice.type === "function") {
    const name = isJsonObject(choice.function) ? choice.function.name : choice.name;
    if (typeof name === "string") return { kind: "named", name };
  }
  return { kind: "auto" };
}

interface ChunkStream {
  id: string;
  model: string;
  answer: ChatAnswer;
  /** Present when the client asked for `stream_options.include_usage`. */
  usage: CompletionUsage | undefined;
}

function chunkFrames({ id, model, answer, usage }: ChunkStream): string[] {
  const chunk = (choices: ChatCompletionChunk.Choice[]): ChatCompletionChunk => ({
    id,
    object: "chat.completion.chunk",
    created: simulatedCreatedAt,
    model,
    service_tier: "default",
    system_fingerprint: simulatedFingerprint,
    choices,
    ...(usage === undefined ? {} : { usage: null }),
  });
  const choice = (
    delta: ChatCompletionChunk.Choice.Delta,
    finishReason: "stop" | "tool_calls" | null,
  ): ChatCompletionChunk.Choice => ({
    index: 0,
    delta,
    finish_reason: finishReason,
    logprobs: null,
  });
  const chunks: ChatCompletionChunk[] = [];
  if (answer.kind === "text") {
    chunks.push(chunk([choice({ role: "assistant", content: "", refusal: null }, null)]));
    for (const delta of textDeltas(answer.text)) chunks.push(chunk([choice({ content: delta }, null)]));
  } else {
    const { id: callId, name, arguments: args } = answer.call;
    const opening = { index: 0, id: callId, type: "function" as const, function: { name, arguments: "" } };
    chunks.push(chunk([choice({ role: "assistant", content: null, tool_calls: [opening], refusal: null }, null)]));
    for (const delta of textDeltas(args)) {
      chunks.push(chunk([choice({ tool_calls: [{ index: 0, function: { arguments: delta } }] }, null)]));
    }
  }
  chunks.push(chunk([choice({}, finishReasonOf(answer))]));
  if (usage !== undefined) chunks.push({ ...chunk([]), usage });
  return [...chunks.map((value) => dataFrame(value)), "data: [DONE]\n\n"];
}

function answerFormat(responseFormat: unknown): AnswerFormat {
  if (!isJsonObject(responseFormat)) return { kind: "text" };
  if (responseFormat.type === "json_object") return { kind: "json-object" };
  if (responseFormat.type === "json_schema" && isJsonObject(responseFormat.json_schema)) {
    const { schema } = responseFormat.json_schema;
    return schema === undefined ? { kind: "json-object" } : { kind: "json-schema", schema };
  }
  return { kind: "text" };
}
