import { isObject, type JsonObject } from "../../../json/json-object.js";

/** A surface and the route below its mount, as the gateway's `match` takes them. */
export interface StoredRoute {
  surface: string;
  route: string;
}

/**
 * The surface and route of a bare request body, from its shape: Gemini has `contents`;
 * OpenAI Responses has `input` or `instructions` and no `messages`; Anthropic has `messages`
 * with `max_tokens` or a top-level `system`; any other `messages` body is OpenAI chat.
 * Undefined when the body has none of these.
 */
export function inferRoute(body: JsonObject): StoredRoute | undefined {
  if (body.contents !== undefined) {
    return { surface: "gemini", route: `/v1beta/models/${geminiModel(body)}:generateContent` };
  }
  if (body.messages === undefined) {
    if (body.input !== undefined || body.instructions !== undefined) return { surface: "openai", route: "/responses" };
    return undefined;
  }
  // Anthropic takes no system or developer role in `messages`, but an OpenAI chat body may
  // carry `max_tokens` (its older name for the output cap), so the roles decide first.
  if (!hasSystemRole(body.messages) && (body.max_tokens !== undefined || body.system !== undefined)) {
    return { surface: "anthropic", route: "/v1/messages" };
  }
  return { surface: "openai", route: "/chat/completions" };
}

// A stored Gemini body has lost its URL and with it the model, which is never counted.
function geminiModel(body: JsonObject): string {
  if (typeof body.model !== "string" || body.model === "") return "unspecified";
  return encodeURIComponent(body.model.replace(/^models\//, ""));
}

function hasSystemRole(messages: unknown): boolean {
  return (
    Array.isArray(messages) &&
    messages.some((message) => isObject(message) && (message.role === "system" || message.role === "developer"))
  );
}
