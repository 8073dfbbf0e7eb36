/*
 * The OpenAI Responses API for a model routed to another provider, by way of Chat Completions: the
 * request becomes a Chat Completions request (which the provider's `ChatTranslation` takes), and the
 * translated `chat.completion` or its chunks become a Responses `response` or its stream events.
 * What has no counterpart is refused as INVALID_REQUEST naming the field; nothing is dropped silently
 * except what carries nothing for another provider (reasoning items, replayed ids and annotations,
 * the summary setting).
 */

export { carriedResponsesMembers, consumedResponsesMembers, responsesToChat } from "./responses-via-chat/request.js";
export { chatToResponse } from "./responses-via-chat/response.js";
export { chatStreamToResponses, type ResponsesStreamTranslator } from "./responses-via-chat/stream.js";
