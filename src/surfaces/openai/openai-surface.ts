import { isObject, type JsonObject } from "../../json/json-object.js";
import type { UpstreamRequest } from "../../transport/transport.js";
import type { RequestedReasoning } from "../requested-reasoning.js";
import { type Endpoint, forMethod, type Surface } from "../surface.js";
import { parseChatCompletion, readChatCompletionTape } from "./chat-completion-body.js";
import { chatStructuredOutput } from "./chat-structured-output.js";
import { classifyOpenAIError } from "./classify-openai-error.js";
import { renderOpenAIError, renderOpenAIStreamError } from "./render-openai-error.js";
import { parseResponseCreate, readResponseCreateTape } from "./response-create-body.js";
import { finalResponseOf, responseStored } from "./responses-history.js";
import { responsesJobs } from "./responses-jobs.js";
import { responsesSessions } from "./responses-session.js";
import { responsesStructuredOutput } from "./responses-structured-output.js";
import { responsesTokenCount } from "./responses-token-count.js";
import { createOpenAISimulator } from "./simulated/simulator.js";
import { matchStoredResponse, responseIdPattern } from "./stored-response-routes.js";

const routes: Record<string, { method: string; endpoint: Endpoint }> = {
  "/chat/completions": {
    method: "POST",
    endpoint: {
      kind: "generate",
      parse: parseChatCompletion,
      readTape: readChatCompletionTape,
      structuredOutput: chatStructuredOutput,
      reasoningOf: (body) => requestedLevel(body.reasoning_effort, "reasoning_effort"),
    },
  },
  "/responses": {
    method: "POST",
    endpoint: {
      kind: "generate",
      parse: parseResponseCreate,
      readTape: readResponseCreateTape,
      structuredOutput: responsesStructuredOutput,
      prefixEffect: responseStored,
      finalResponseOf,
      tokenCount: responsesTokenCount,
      sessions: responsesSessions,
      jobs: responsesJobs,
      reasoningOf: (body) =>
        isObject(body.reasoning) ? requestedLevel(body.reasoning.effort, "reasoning.effort") : undefined,
    },
  },
  "/responses/input_tokens": {
    method: "POST",
    endpoint: { kind: "count", parse: parseResponseCreate, readTape: readResponseCreateTape },
  },
  "/models": { method: "GET", endpoint: { kind: "proxy", listsModels: true } },
};

/** The OpenAI API (Chat Completions, Responses with their stored responses, Models) at `/openai/v1`. */
export const openaiSurface: Surface = {
  name: "openai",
  genAi: {
    provider: "openai",
    operation: (route) => (route === "/chat/completions" || route === "/responses" ? "chat" : "other"),
  },
  mount: "/openai/v1",
  match(method, path) {
    const route = routes[path];
    if (route === undefined) return matchStoredResponse(method, path);
    return forMethod(method, route.method, route.endpoint);
  },
  forwardedHeaders: ["authorization", "openai-organization", "openai-project", "openai-beta", "idempotency-key"],
  selfTestModel: "gpt-4.1-mini",
  // Responses has `input` or `instructions` and no `messages`; any `messages` body may be chat, unless another API's
  // shape claims it surely (Anthropic's, which also has `messages`).
  bareBodyRoute(body) {
    if (body.messages !== undefined) return { route: "/chat/completions", sure: false };
    if (body.input !== undefined || body.instructions !== undefined) return { route: "/responses", sure: true };
    return undefined;
  },
  shippedModels: { prefixes: [], defaultModels: true },
  credentialHeaders: ["authorization"],
  // Those of the proxied stored-response routes: retrieve (`stream`, `starting_after`, `include`,
  // which the SDK writes as `include[]`) and input_items (`after`, `before`, `limit`, `order`).
  forwardedQuery: [
    "stream",
    "starting_after",
    "include",
    "include[]",
    "include_obfuscation",
    "after",
    "before",
    "limit",
    "order",
  ],
  relayedResponseHeaders: [
    "x-request-id",
    "openai-processing-ms",
    "openai-version",
    "x-ratelimit-*",
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
  ],
  authorize: bearerAuthorization,
  upstream: {
    variable: "PROMPTGATE_UPSTREAM_OPENAI",
    keyVariable: "OPENAI_API_KEY",
    defaultBaseUrl: "https://api.openai.com/v1",
    describe: "upstream base URL incl. /v1",
  },
  simulated: { mount: "/openai", basePath: "/openai/v1", create: () => createOpenAISimulator() },
  classifyError: classifyOpenAIError,
  renderError: renderOpenAIError,
  renderStreamError: renderOpenAIStreamError,
  endsStream: endsOpenAIStream,
  routesModels: true,
  prefixTokenCount(prefix) {
    if (prefix.kind !== "previous-response" || !responseIdPattern.test(prefix.id)) return undefined;
    return {
      path: `/responses/${prefix.id}`,
      tokensOf: (response) => {
        const usage = response.usage;
        return isObject(usage) && typeof usage.total_tokens === "number" ? usage.total_tokens : undefined;
      },
    };
  },
};

/** A key as OpenAI takes it: `authorization: Bearer …`. */
export function bearerAuthorization(request: UpstreamRequest, key: string): UpstreamRequest {
  return { ...request, headers: { ...request.headers, authorization: `Bearer ${key}` } };
}

/** A level the request names, as it wrote it; absent or null asks for none. */
function requestedLevel(value: unknown, param: string): RequestedReasoning | undefined {
  if (value === undefined || value === null) return undefined;
  return { level: typeof value === "string" ? value : JSON.stringify(value), param };
}

/** Chat completions end with `[DONE]`, a Responses stream with the event of its ended response. */
function endsOpenAIStream(data: string, event: JsonObject | undefined): boolean {
  return data === "[DONE]" || (event !== undefined && finalResponseOf(event) !== undefined);
}
