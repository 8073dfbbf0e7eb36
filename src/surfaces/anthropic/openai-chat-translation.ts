/**
 * Chat Completions to and from the Anthropic Messages API, assembled from the request, answer and
 * stream translations under `./openai-chat/`.
 */

import type { ChatTranslation } from "../translation.js";
import { answer } from "./openai-chat/answer.js";
import { request } from "./openai-chat/request.js";
import { stream } from "./openai-chat/stream.js";

export { anthropicThinkingBudgets, defaultAnthropicMaxTokens } from "./openai-chat/request.js";

/** Chat Completions to and from the Anthropic Messages API. */
export const anthropicChatTranslation: ChatTranslation = { request, answer, stream };
