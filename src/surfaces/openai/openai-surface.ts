import type { Endpoint, Surface } from "../surface.js";
import { parseChatCompletion } from "./parse-chat-completion.js";
import { parseResponseCreate } from "./parse-response-create.js";
import { renderOpenAIError } from "./render-openai-error.js";

const routes: Record<string, { method: string; endpoint: Endpoint }> = {
  "/chat/completions": { method: "POST", endpoint: { kind: "generate", parse: parseChatCompletion } },
  "/responses": { method: "POST", endpoint: { kind: "generate", parse: parseResponseCreate } },
  "/models": { method: "GET", endpoint: { kind: "proxy" } },
};

/** The OpenAI API (Chat Completions, Responses, Models) at `/openai/v1`. */
export const openaiSurface: Surface = {
  name: "openai",
  mount: "/openai/v1",
  match(method, path) {
    const route = routes[path];
    if (route === undefined) return undefined;
    return route.method === method ? route.endpoint : "method-not-allowed";
  },
  forwardedHeaders: ["authorization", "openai-organization", "openai-project", "openai-beta", "idempotency-key"],
  hasCredential: (headers) => headers.has("authorization"),
  serverCredential: (key) => ["authorization", `Bearer ${key}`],
  renderError: renderOpenAIError,
};
