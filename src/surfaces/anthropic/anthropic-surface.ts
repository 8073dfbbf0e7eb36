import { isObject, type JsonObject } from "../../json/json-object.js";
import { levelOfBudget, type RequestedReasoning } from "../requested-reasoning.js";
import { type Endpoint, forMethod, type Surface } from "../surface.js";
import { classifyAnthropicError } from "./classify-anthropic-error.js";
import { parseMessages, readMessagesTape } from "./messages-body.js";
import { messagesStructuredOutput } from "./messages-structured-output.js";
import { messagesTokenCount } from "./messages-token-count.js";
import { anthropicChatTranslation, anthropicThinkingBudgets } from "./openai-chat-translation.js";
import { renderAnthropicError, renderAnthropicStreamError } from "./render-anthropic-error.js";
import { createAnthropicSimulator } from "./simulated/simulator.js";

const routes: Record<string, Endpoint> = {
  "/v1/messages": {
    kind: "generate",
    parse: parseMessages,
    readTape: readMessagesTape,
    structuredOutput: messagesStructuredOutput,
    tokenCount: messagesTokenCount,
    reasoningOf: anthropicReasoning,
  },
  "/v1/messages/count_tokens": { kind: "count", parse: parseMessages, readTape: readMessagesTape },
};

/** The level of `thinking`: `none` when disabled, else its `budget_tokens` read by the translation's budgets. */
function anthropicReasoning(body: JsonObject): RequestedReasoning | undefined {
  const thinking = body.thinking;
  if (!isObject(thinking)) return undefined;
  if (thinking.type === "disabled") return { level: "none", param: "thinking.type" };
  if (thinking.type !== "enabled" || typeof thinking.budget_tokens !== "number") return undefined;
  return { level: levelOfBudget(anthropicThinkingBudgets, thinking.budget_tokens), param: "thinking.budget_tokens" };
}

function hasSystemRole(messages: unknown): boolean {
  return (
    Array.isArray(messages) &&
    messages.some((message) => isObject(message) && (message.role === "system" || message.role === "developer"))
  );
}

/** The Anthropic Messages API at `/anthropic`. */
export const anthropicSurface: Surface = {
  name: "anthropic",
  genAi: { provider: "anthropic", operation: (route) => (route === "/v1/messages" ? "chat" : "other") },
  mount: "/anthropic",
  match(method, path) {
    const endpoint = routes[path];
    if (endpoint === undefined) return undefined;
    return forMethod(method, "POST", endpoint);
  },
  forwardedHeaders: ["x-api-key", "authorization", "anthropic-version", "anthropic-beta"],
  // The SDK's opt-in to running in a browser (`dangerouslyAllowBrowser`).
  browserHeaders: ["anthropic-dangerous-direct-browser-access"],
  selfTestModel: "claude-haiku-4-5",
  // Messages takes no system or developer role in `messages`, but an OpenAI chat body may carry `max_tokens` (its
  // older name for the output cap), so the roles decide first.
  bareBodyRoute(body) {
    if (body.messages === undefined || hasSystemRole(body.messages)) return undefined;
    return body.max_tokens !== undefined || body.system !== undefined
      ? { route: "/v1/messages", sure: true }
      : undefined;
  },
  shippedModels: { prefixes: ["claude-"] },
  credentialHeaders: ["x-api-key", "authorization"],
  // Beta calls may be marked `?beta=true` (earlier SDKs' beta resources did so).
  forwardedQuery: ["beta"],
  relayedResponseHeaders: ["request-id", "anthropic-ratelimit-*", "retry-after", "retry-after-ms", "x-should-retry"],
  authorize: (request, key) => ({ ...request, headers: { ...request.headers, "x-api-key": key } }),
  upstream: {
    variable: "PROMPTGATE_UPSTREAM_ANTHROPIC",
    keyVariable: "ANTHROPIC_API_KEY",
    defaultBaseUrl: "https://api.anthropic.com",
    describe: "upstream base URL without /v1",
  },
  simulated: { mount: "/anthropic", basePath: "/anthropic", create: () => createAnthropicSimulator() },
  classifyError: classifyAnthropicError,
  chatTranslation: anthropicChatTranslation,
  // The API version the translation is written against.
  translatedHeaders: { "anthropic-version": "2023-06-01" },
  renderError: renderAnthropicError,
  renderStreamError: renderAnthropicStreamError,
  endsStream: (_data, event) => event?.type === "message_stop",
};
