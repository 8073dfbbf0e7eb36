import type { JsonObject } from "../json/json-object.js";

/** The reasoning levels the gateway accepts at all, from none to the most. */
export const reasoningLevels = ["none", "low", "medium", "high", "xhigh", "max"] as const;

/** One of `reasoningLevels`. */
export type ReasoningLevel = (typeof reasoningLevels)[number];

/** What a translation is told about a call besides its body. */
export interface TranslationContext {
  /** The provider's own id of the model the call goes to. */
  upstreamModel: string;
  /** The model name the client asked for; the translated answer carries it as `model`. */
  publicModel: string;
  /** The call's reasoning level, already checked against the allowlist and the model; undefined when it asks for none. */
  reasoning: ReasoningLevel | undefined;
  /** Chat Completions parameters the policy lets a translation drop where the provider has no counterpart. */
  droppable: readonly string[];
  /** The answer's id (`chatcmpl-…`), fixed by the gateway so that a stream's chunks share it. */
  id: string;
  /** The answer's `created`, in seconds since the epoch. */
  created: number;
}

/** A request in a provider's own API: the route path below its base URL (with its query, if any) and the body. */
export interface NativeRequest {
  path: string;
  body: JsonObject;
}

/**
 * Chat Completions to and from one provider's own API. `request` throws INVALID_REQUEST (via
 * `invalidRequest(message, param)`) naming a parameter the provider has no counterpart for, unless it
 * is droppable; nothing is dropped silently.
 */
export interface ChatTranslation {
  /** The native request for a Chat Completions body (already parsed and measured as one). */
  request(body: JsonObject, context: TranslationContext): NativeRequest;
  /** The `chat.completion` object for a provider's whole successful answer. */
  answer(native: JsonObject, context: TranslationContext): JsonObject;
  /** A translator of one streamed answer; `body` is the client's Chat Completions request. */
  stream(body: JsonObject, context: TranslationContext): ChatStreamTranslator;
}

/** Turns a provider's streamed events into `chat.completion.chunk` objects, in order. */
export interface ChatStreamTranslator {
  /** The chunks one event (its data parsed as JSON) becomes; error events never reach it. */
  event(native: JsonObject): JsonObject[];
  /** The chunks that close the stream once the provider's last event was read (e.g. usage); `[DONE]` is not one. */
  end(): JsonObject[];
}
