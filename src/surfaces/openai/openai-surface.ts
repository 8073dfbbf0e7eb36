import { type Endpoint, forMethod, type Surface } from "../surface.js";
import { isObject } from "../wire-fields.js";
import { chatStructuredOutput } from "./chat-structured-output.js";
import { classifyOpenAIError } from "./classify-openai-error.js";
import { parseChatCompletion } from "./parse-chat-completion.js";
import { parseResponseCreate } from "./parse-response-create.js";
import { renderOpenAIError, renderOpenAIStreamError } from "./render-openai-error.js";
import { completedResponseOf, responseStored } from "./responses-history.js";
import { responsesStructuredOutput } from "./responses-structured-output.js";

const routes: Record<string, { method: string; endpoint: Endpoint }> = {
  "/chat/completions": {
    method: "POST",
    endpoint: { kind: "generate", parse: parseChatCompletion, structuredOutput: chatStructuredOutput },
  },
  "/responses": {
    method: "POST",
    endpoint: {
      kind: "generate",
      parse: parseResponseCreate,
      structuredOutput: responsesStructuredOutput,
      prefixEffect: responseStored,
      finalResponseOf: completedResponseOf,
    },
  },
  "/models": { method: "GET", endpoint: { kind: "proxy" } },
};

/** The OpenAI API (Chat Completions, Responses, Models) at `/openai/v1`. */
export const openaiSurface: Surface = {
  name: "openai",
  mount: "/openai/v1",
  match(method, path) {
    const route = routes[path];
    if (route === undefined) return undefined;
    return forMethod(method, route.method, route.endpoint);
  },
  forwardedHeaders: ["authorization", "openai-organization", "openai-project", "openai-beta", "idempotency-key"],
  credentialHeaders: ["authorization"],
  serverCredential: (key) => ["authorization", `Bearer ${key}`],
  classifyError: classifyOpenAIError,
  renderError: renderOpenAIError,
  renderStreamError: renderOpenAIStreamError,
  prefixTokenCount(prefix) {
    if (prefix.kind !== "previous-response" || !/^[A-Za-z0-9_-]+$/.test(prefix.id)) return undefined;
    return {
      path: `/responses/${prefix.id}`,
      tokensOf: (response) => {
        const usage = response.usage;
        return isObject(usage) && typeof usage.total_tokens === "number" ? usage.total_tokens : undefined;
      },
    };
  },
};
