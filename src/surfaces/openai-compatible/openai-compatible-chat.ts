import type { JsonObject } from "../../json/json-object.js";
import type { ChatTranslation, ReasoningLevel } from "../translation.js";

/**
 * The reasoning effort an OpenAI-compatible server is sent for a level: OpenAI's own names, the levels above its
 * highest (`xhigh` is OpenAI's newest, `max` none of its) as `high`, which every server that takes an effort knows.
 */
export const compatibleEfforts: Readonly<Record<ReasoningLevel, string>> = {
  none: "none",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

/**
 * Chat Completions to a server that speaks them: the same body with the provider's model id (and the level's
 * effort), the answer and its chunks with the model name the client asked for. Nothing else changes, so nothing is
 * refused that the server itself would take.
 */
export const openaiCompatibleChat: ChatTranslation = {
  request(body, context) {
    const sent: JsonObject = { ...body, model: context.upstreamModel };
    if (context.reasoning !== undefined) sent.reasoning_effort = compatibleEfforts[context.reasoning];
    return { path: "/chat/completions", body: sent };
  },
  answer: (native, context) => ({ ...native, model: context.publicModel }),
  stream: (_body, context) => ({
    event: (native) => [{ ...native, model: context.publicModel }],
    end: () => [],
  }),
};
