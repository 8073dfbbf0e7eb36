import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionTokenLogprob,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import { isObject, type JsonObject } from "../../../json/json-object.js";
import type { TranslationContext } from "../../translation.js";
import { isSet } from "./is-set.js";

/**
 * A whole Gemini `generateContent` answer as a `chat.completion`, and the readers of a Gemini
 * answer the stream translator shares: candidates, answer text, function calls as tool calls,
 * finish reasons, logprobs and usage.
 */

export type FinishReason = ChatCompletion.Choice["finish_reason"];

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
export function finishReasonOf(reason: unknown, calledTools: boolean): FinishReason {
  if (reason === "MAX_TOKENS") return "length";
  if (typeof reason === "string" && filterReasons.has(reason)) return "content_filter";
  return calledTools ? "tool_calls" : "stop";
}

/** A chat object as the wire body the translation hands back. */
export function wireObject(value: ChatCompletion | ChatCompletionChunk): JsonObject {
  return value as unknown as JsonObject;
}

/** The objects of a JSON array member; anything else is none. */
function objectsOf(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

export function candidatesOf(native: JsonObject): JsonObject[] {
  return objectsOf(native.candidates);
}

/** Whether Gemini refused the prompt itself (no candidates, a block reason). */
export function promptBlocked(native: JsonObject): boolean {
  return isObject(native.promptFeedback) && isSet(native.promptFeedback.blockReason);
}

/** A candidate's index: its own, else its position. */
export function indexOf(candidate: JsonObject, position: number): number {
  return typeof candidate.index === "number" ? candidate.index : position;
}

export function partsOf(candidate: JsonObject): JsonObject[] {
  return isObject(candidate.content) ? objectsOf(candidate.content.parts) : [];
}

/** The answer text of parts: their non-thought text joined; undefined when there is none. */
export function answerText(parts: JsonObject[]): string | undefined {
  const texts = parts.filter((part) => typeof part.text === "string" && part.thought !== true);
  return texts.length === 0 ? undefined : texts.map((part) => part.text as string).join("");
}

/** The function calls among parts, as their name and arguments. */
export function functionCallsOf(parts: JsonObject[]): { name: string; args: unknown }[] {
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

export function toolCall(
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
export function logprobsOf(result: unknown): ChatCompletion.Choice.Logprobs | null {
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
export function usageOf(metadata: unknown): CompletionUsage | undefined {
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
export function chatCompletion(native: JsonObject, context: TranslationContext): ChatCompletion {
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
