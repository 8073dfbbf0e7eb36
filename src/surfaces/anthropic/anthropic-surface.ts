import { jsonObjectOf } from "../../json/json-object-of.js";
import { type Endpoint, forMethod, type Surface } from "../surface.js";
import { classifyAnthropicError } from "./classify-anthropic-error.js";
import { parseMessages } from "./messages-body.js";
import { messagesStructuredOutput } from "./messages-structured-output.js";
import { messagesTokenCount } from "./messages-token-count.js";
import { renderAnthropicError, renderAnthropicStreamError } from "./render-anthropic-error.js";

const routes: Record<string, Endpoint> = {
  "/v1/messages": {
    kind: "generate",
    parse: parseMessages,
    structuredOutput: messagesStructuredOutput,
    tokenCount: messagesTokenCount,
  },
  "/v1/messages/count_tokens": { kind: "count", parse: parseMessages },
};

/** The Anthropic Messages API at `/anthropic`. */
export const anthropicSurface: Surface = {
  name: "anthropic",
  mount: "/anthropic",
  match(method, path) {
    const endpoint = routes[path];
    if (endpoint === undefined) return undefined;
    return forMethod(method, "POST", endpoint);
  },
  forwardedHeaders: ["x-api-key", "authorization", "anthropic-version", "anthropic-beta"],
  credentialHeaders: ["x-api-key", "authorization"],
  // Beta calls may be marked `?beta=true` (earlier SDKs' beta resources did so).
  forwardedQuery: ["beta"],
  relayedResponseHeaders: ["request-id", "anthropic-ratelimit-*", "retry-after", "retry-after-ms", "x-should-retry"],
  serverCredential: (key) => ["x-api-key", key],
  classifyError: classifyAnthropicError,
  renderError: renderAnthropicError,
  renderStreamError: renderAnthropicStreamError,
  endsStream: (data) => jsonObjectOf(data)?.type === "message_stop",
};
