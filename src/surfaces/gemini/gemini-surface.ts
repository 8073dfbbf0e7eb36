import { invalidRequest } from "../../errors/gateway-error.js";
import { isObject, type JsonObject } from "../../json/json-object.js";
import { levelOfBudget, type RequestedReasoning } from "../requested-reasoning.js";
import { type Endpoint, forMethod, type Surface, type TokenCountRequest } from "../surface.js";
import { tokenCountRequest } from "../token-count.js";
import { matchCachedContents } from "./cached-contents.js";
import { classifyGeminiError } from "./classify-gemini-error.js";
import { geminiStructuredOutput } from "./gemini-structured-output.js";
import { geminiChatTranslation, geminiThinkingBudgets } from "./openai-chat-translation.js";
import { parseCountTokens } from "./parse-count-tokens.js";
import { parseGenerateContent, readGenerateContentTape } from "./parse-generate-content.js";
import { renderGeminiError, renderGeminiStreamError } from "./render-gemini-error.js";
import { createGeminiSimulator } from "./simulated/simulator.js";

const listRoute = /^\/(?:v1beta|v1|v1alpha)\/models$/;
const modelRoute = /^\/(v1beta|v1|v1alpha)\/models\/([^/]+?)(?::([A-Za-z]+))?$/;

const methods: Record<string, Endpoint> = {
  generateContent: {
    kind: "generate",
    parse: (body, path) => parseGenerateContent(body, modelOf(path), false),
    readTape: (tape, path) => readGenerateContentTape(tape, modelOf(path), false),
    structuredOutput: geminiStructuredOutput,
    tokenCount: generateContentTokenCount,
    reasoningOf: geminiReasoning,
  },
  streamGenerateContent: {
    kind: "generate",
    parse: (body, path) => parseGenerateContent(body, modelOf(path), true),
    readTape: (tape, path) => readGenerateContentTape(tape, modelOf(path), true),
    structuredOutput: geminiStructuredOutput,
    tokenCount: generateContentTokenCount,
    reasoningOf: geminiReasoning,
  },
  countTokens: { kind: "count", parse: (body, path) => parseCountTokens(body, modelOf(path)) },
};

/** The level of a `thinkingConfig`: its `thinkingLevel`, or its `thinkingBudget` read by the translation's budgets. */
function geminiReasoning(body: JsonObject): RequestedReasoning | undefined {
  const config = isObject(body.generationConfig) ? body.generationConfig.thinkingConfig : undefined;
  if (!isObject(config)) return undefined;
  const param = "generationConfig.thinkingConfig";
  if (typeof config.thinkingLevel === "string") {
    return { level: config.thinkingLevel.toLowerCase(), param: `${param}.thinkingLevel` };
  }
  if (typeof config.thinkingBudget === "number") {
    return { level: levelOfBudget(geminiThinkingBudgets, config.thinkingBudget), param: `${param}.thinkingBudget` };
  }
  return undefined;
}

/** Gemini's own count of a generateContent call: countTokens with the whole request. */
function generateContentTokenCount(body: JsonObject, path: string): TokenCountRequest | undefined {
  const route = modelRoute.exec(path);
  if (route === null) return undefined;
  const request = { generateContentRequest: { ...body, model: `models/${modelOf(path)}` } };
  return tokenCountRequest(`/${route[1]}/models/${route[2]}:countTokens`, request, "totalTokens");
}

function modelOf(path: string): string | undefined {
  const model = modelRoute.exec(path)?.[2];
  if (model === undefined) return undefined;
  try {
    return decodeURIComponent(model);
  } catch {
    throw invalidRequest("The model name in the URL is not valid percent-encoding.", "model");
  }
}

/** The Gemini API (generateContent, streamGenerateContent, countTokens, models) at `/gemini`. */
export const geminiSurface: Surface = {
  name: "gemini",
  genAi: {
    provider: "gcp.gemini",
    operation: (route) =>
      route.endsWith(":generateContent") || route.endsWith(":streamGenerateContent") ? "generate_content" : "other",
  },
  mount: "/gemini",
  match(method, path) {
    if (listRoute.test(path)) return forMethod(method, "GET", { kind: "proxy" });
    const cacheRoute = matchCachedContents(method, path);
    if (cacheRoute !== undefined) return cacheRoute;
    const route = modelRoute.exec(path);
    if (route === null) return undefined;
    const operation = route[3];
    if (operation === undefined) return forMethod(method, "GET", { kind: "proxy" });
    const endpoint = methods[operation];
    if (endpoint === undefined) return undefined;
    return forMethod(method, "POST", endpoint);
  },
  forwardedHeaders: ["x-goog-api-key", "authorization", "x-goog-api-client", "x-goog-user-project", "x-server-timeout"],
  selfTestModel: "gemini-2.5-flash",
  // A stored body has lost its URL and with it the model, which is never counted.
  bareBodyRoute(body) {
    if (body.contents === undefined) return undefined;
    const model =
      typeof body.model === "string" && body.model !== "" ? body.model.replace(/^models\//, "") : "unspecified";
    return { route: `/v1beta/models/${encodeURIComponent(model)}:generateContent`, sure: true };
  },
  shippedModels: { prefixes: ["gemini-"] },
  credentialHeaders: ["x-goog-api-key", "authorization"],
  credentialQuery: "key",
  // `alt` (e.g. `alt=sse` for a stream), paging of the model and cachedContents lists, a cache patch's mask.
  forwardedQuery: ["alt", "pageSize", "pageToken", "updateMask"],
  relayedResponseHeaders: ["x-goog-request-id", "x-request-id", "retry-after"],
  authorize: (request, key) => ({ ...request, headers: { ...request.headers, "x-goog-api-key": key } }),
  upstream: {
    variable: "PROMPTGATE_UPSTREAM_GEMINI",
    keyVariable: "GEMINI_API_KEY",
    defaultBaseUrl: "https://generativelanguage.googleapis.com",
    describe: "upstream base URL without version",
  },
  simulated: { mount: "/gemini", basePath: "/gemini", create: (clock) => createGeminiSimulator(clock) },
  classifyError: classifyGeminiError,
  chatTranslation: geminiChatTranslation,
  renderError: renderGeminiError,
  renderStreamError: renderGeminiStreamError,
  // Gemini's last chunk carries no mark of its own (a finish reason may come before usage): no `endsStream`, its
  // stream ends when closed, and is complete once a chunk told why it finished.
  completesStream: finishesGeminiStream,
  prefixTokenCount(prefix, apiPath) {
    if (prefix.kind !== "cached-content") return undefined;
    const version = /^\/(v1beta|v1|v1alpha)\//.exec(apiPath)?.[1] ?? "v1beta";
    const name = prefix.id.startsWith("cachedContents/") ? prefix.id : `cachedContents/${prefix.id}`;
    if (!/^cachedContents\/[A-Za-z0-9_-]+$/.test(name)) return undefined;
    return {
      path: `/${version}/${name}`,
      tokensOf: (resource) => {
        const usage = resource.usageMetadata;
        return isObject(usage) && typeof usage.totalTokenCount === "number" ? usage.totalTokenCount : undefined;
      },
    };
  },
};

/** Whether a Gemini stream chunk says why the answer finished: a candidate's finish reason, or a blocked prompt. */
function finishesGeminiStream(_data: string, chunk: JsonObject | undefined): boolean {
  if (chunk === undefined) return false;
  if (isObject(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === "string") return true;
  const candidates = Array.isArray(chunk.candidates) ? chunk.candidates : [];
  return candidates.some((candidate) => isObject(candidate) && typeof candidate.finishReason === "string");
}
