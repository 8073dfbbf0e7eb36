import type { JsonObject } from "../../json/json-object.js";
import type { TokenCountRequest } from "../surface.js";
import { tokenCountRequest } from "../token-count.js";

/** The members `POST /v1/messages/count_tokens` takes (the beta ones included). */
const countable = new Set([
  "messages",
  "model",
  "cache_control",
  "output_config",
  "output_format",
  "speed",
  "system",
  "thinking",
  "tool_choice",
  "tools",
  "billing_policy",
  "compaction",
  "context_management",
  "mcp_servers",
]);

/**
 * Anthropic's own count of a Messages call: the body without what count_tokens does not take.
 * A container's skills and a continued thread are not counted there, so a call with either
 * cannot be estimated.
 */
export function messagesTokenCount(body: JsonObject): TokenCountRequest | undefined {
  const container = body.container;
  if ((container !== undefined && container !== null && typeof container !== "string") || body.thread != null) {
    return undefined;
  }
  return tokenCountRequest("/v1/messages/count_tokens", body, "input_tokens", countable);
}
