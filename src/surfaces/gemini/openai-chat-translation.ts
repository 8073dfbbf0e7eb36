import { isObject } from "../../json/json-object.js";
import type { ChatTranslation } from "../translation.js";
import { chatCompletion, wireObject } from "./openai-chat/answer.js";
import { geminiRequest } from "./openai-chat/request.js";
import { chunkTranslator } from "./openai-chat/stream.js";

/**
 * The OpenAI Chat Completions translation for Gemini, assembled from openai-chat/: request.ts builds
 * the native request, answer.ts the `chat.completion`, stream.ts the chunks of a streamed answer.
 */

export { geminiThinkingBudgets } from "./openai-chat/generation-config.js";

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
