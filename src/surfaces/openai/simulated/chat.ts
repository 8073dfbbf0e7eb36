import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import { isJsonObject, isNonEmptyString, type JsonObject, lastUserText } from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { seedFromDigest, simulatedCreatedAt } from "../../../simulated/request-digest.js";
import { findRequestProblem, type RequestProblem, type RequiredField } from "../../../simulated/request-problem.js";
import { dataFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";

const requiredFields: RequiredField[] = [
  { field: "model", expected: "a non-empty string", check: isNonEmptyString },
  { field: "messages", expected: "an array", check: Array.isArray },
];

/** The first problem with a Chat Completions body, if any. */
export function chatRequestProblem(body: JsonObject): RequestProblem | undefined {
  return findRequestProblem(body, requiredFields);
}

/** A simulated Chat Completions answer: a `chat.completion`, or its chunk stream when `stream` is set. */
export function simulateChatCompletion({ body, digest }: JsonBody): Response {
  const model = String(body.model);
  const text = simulatedAnswer({
    lastUserText: lastUserText(body.messages, "content", "text"),
    format: answerFormat(body.response_format),
    seed: seedFromDigest(digest),
  });
  const promptTokens = estimatePromptTokens(body.messages, body.tools);
  const completionTokens = estimateTokens(text);
  const usage: CompletionUsage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const id = `chatcmpl-sim${digest.slice(0, 24)}`;
  if (body.stream === true) {
    const includeUsage = isJsonObject(body.stream_options) && body.stream_options.include_usage === true;
    return sseResponse(chunkFrames({ id, model, text, usage: includeUsage ? usage : undefined }));
  }
  const completion: ChatCompletion = {
    id,
    object: "chat.completion",
    created: simulatedCreatedAt,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: text, refusal: null },
        finish_reason: "stop",
        logprobs: null,
      },
    ],
    usage,
    system_fingerprint: "promptgate-simulated",
  };
  return Response.json(completion);
}

interface ChunkStream {
  id: string;
  model: string;
  text: string;
  /** Present when the client asked for `stream_options.include_usage`. */
  usage: CompletionUsage | undefined;
}

function chunkFrames({ id, model, text, usage }: ChunkStream): string[] {
  const chunk = (choices: ChatCompletionChunk.Choice[]): ChatCompletionChunk => ({
    id,
    object: "chat.completion.chunk",
    created: simulatedCreatedAt,
    model,
    system_fingerprint: "promptgate-simulated",
    choices,
    ...(usage === undefined ? {} : { usage: null }),
  });
  const choice = (
    delta: ChatCompletionChunk.Choice.Delta,
    finishReason: "stop" | null,
  ): ChatCompletionChunk.Choice => ({
    index: 0,
    delta,
    finish_reason: finishReason,
    logprobs: null,
  });
  const chunks = [chunk([choice({ role: "assistant", content: "", refusal: null }, null)])];
  for (const delta of textDeltas(text)) chunks.push(chunk([choice({ content: delta }, null)]));
  chunks.push(chunk([choice({}, "stop")]));
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
