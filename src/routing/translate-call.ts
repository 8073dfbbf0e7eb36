import { GatewayError, invalidRequest } from "../errors/gateway-error.js";
import type { JsonObject } from "../json/json-object.js";
import { chatStreamToResponses, chatToResponse, responsesToChat } from "../surfaces/openai/responses-via-chat.js";
import type { MeasuredEndpoint, Surface } from "../surfaces/surface.js";
import type { ChatTranslation, NativeRequest, TranslationContext } from "../surfaces/translation.js";

/** Turns a provider's streamed events into the client's, as server-sent event text. */
export interface StreamTranslation {
  /** The client's events for one provider event (its data parsed). */
  event(native: JsonObject): string;
  /** The client's closing events once the provider's last event was read. */
  end(): string;
}

/** An OpenAI call translated for another provider: the native request, and how its answer comes back. */
export interface CallTranslation {
  /** The provider the call goes to. */
  provider: Surface;
  /** The provider's endpoint for the native request, which measures what is sent. */
  endpoint: MeasuredEndpoint;
  /** The native request; its path may carry a query (Gemini's `?alt=sse`). */
  request: NativeRequest;
  /** The client's answer for the provider's whole one. */
  answer(native: JsonObject): JsonObject;
  /** A translator for one streamed answer. */
  stream(): StreamTranslation;
}

/** The OpenAI routes a routed model answers on, besides its own provider's. */
export const translatedRoutes = ["/chat/completions", "/responses"];

/**
 * Translates an OpenAI call (`path` below `/openai/v1`) for `provider`: Chat Completions through the provider's
 * chat translation, Responses through Chat Completions. Refuses (INVALID_REQUEST) a route or a parameter that has
 * no counterpart at the provider.
 */
export function translateCall(
  path: string,
  body: JsonObject,
  provider: Surface,
  context: TranslationContext,
): CallTranslation {
  const chat = provider.chatTranslation;
  if (chat === undefined || !translatedRoutes.includes(path)) {
    throw invalidRequest(
      `This model is served by the ${provider.name} provider, which the OpenAI API reaches only through ${translatedRoutes.join(" and ")}; call one of them, or the ${provider.name} API at ${provider.mount}.`,
      "model",
    );
  }
  if (path === "/chat/completions") {
    const request = chat.request(body, context);
    return {
      provider,
      endpoint: nativeEndpoint(provider, request.path),
      request,
      answer: (native) => chat.answer(native, context),
      stream: () => chatStream(chat, body, context),
    };
  }
  const chatBody = responsesToChat(body);
  const request = asResponsesRefusal(() => chat.request(chatBody, context));
  const responseId = `resp_${context.id.replace(/^chatcmpl-/, "")}`;
  return {
    provider,
    endpoint: nativeEndpoint(provider, request.path),
    request,
    answer: (native) => chatToResponse(chat.answer(native, context), body, responseId),
    stream: () => responsesStream(chat, chatBody, body, responseId, context),
  };
}

/** The Responses names of the Chat Completions parameters a Responses request is translated into. */
const responsesNames: Readonly<Record<string, string>> = {
  verbosity: "text.verbosity",
  max_tokens: "max_output_tokens",
  reasoning_effort: "reasoning.effort",
  response_format: "text.format",
};

/** Runs a chat translation of a Responses request: a refusal names the field as the client wrote it. */
function asResponsesRefusal<T>(translate: () => T): T {
  try {
    return translate();
  } catch (error) {
    const param = GatewayError.isInstance(error) ? error.details.param : undefined;
    if (param === undefined || !GatewayError.isInstance(error)) throw error;
    const top = /^[a-z_]+/.exec(param)?.[0] ?? param;
    const renamed = responsesNames[top];
    if (renamed === undefined) throw error;
    const responsesParam = renamed + param.slice(top.length);
    throw new GatewayError(error.code, error.status, error.message.replaceAll(`'${param}'`, `'${responsesParam}'`), {
      ...error.details,
      param: responsesParam,
    });
  }
}

/** Chat Completions chunks as OpenAI sends them: one `data:` event each, and `[DONE]` last. */
function chatStream(chat: ChatTranslation, body: JsonObject, context: TranslationContext): StreamTranslation {
  const chunks = chat.stream(body, context);
  return {
    event: (native) => chunks.event(native).map(dataEvent).join(""),
    end: () => `${chunks.end().map(dataEvent).join("")}data: [DONE]\n\n`,
  };
}

/** Responses events as OpenAI sends them: each named by its type. */
function responsesStream(
  chat: ChatTranslation,
  chatBody: JsonObject,
  body: JsonObject,
  responseId: string,
  context: TranslationContext,
): StreamTranslation {
  const chunks = chat.stream(chatBody, context);
  const events = chatStreamToResponses(body, responseId, context.created);
  const named = (event: JsonObject) => `event: ${String(event.type)}\n${dataEvent(event)}`;
  return {
    event: (native) => chunks.event(native).flatMap(events.chunk).map(named).join(""),
    end: () => [...chunks.end().flatMap(events.chunk), ...events.end()].map(named).join(""),
  };
}

function dataEvent(value: JsonObject): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** The provider's measured endpoint for a native request path (its query aside). */
function nativeEndpoint(provider: Surface, path: string): MeasuredEndpoint {
  const endpoint = provider.match("POST", withoutQuery(path));
  if (endpoint === undefined || endpoint.kind === "method-not-allowed" || endpoint.kind === "proxy") {
    throw new Error(`The ${provider.name} translation wrote a request to ${path}, which is no measured route of it.`);
  }
  return endpoint;
}

/** A route path without its query. */
export function withoutQuery(path: string): string {
  const query = path.indexOf("?");
  return query === -1 ? path : path.slice(0, query);
}
