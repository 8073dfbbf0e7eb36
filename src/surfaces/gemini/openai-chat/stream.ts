import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { JsonObject } from "../../../json/json-object.js";
import type { ChatStreamTranslator, TranslationContext } from "../../translation.js";
import {
  answerText,
  candidatesOf,
  type FinishReason,
  finishReasonOf,
  functionCallsOf,
  indexOf,
  logprobsOf,
  partsOf,
  promptBlocked,
  toolCall,
  usageOf,
  wireObject,
} from "./answer.js";

/** Streamed Gemini answers (`streamGenerateContent?alt=sse` events) as `chat.completion.chunk` objects. */

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
export function chunkTranslator(context: TranslationContext, includeUsage: boolean): ChatStreamTranslator {
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
