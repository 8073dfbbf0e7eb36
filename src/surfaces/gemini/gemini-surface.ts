import { invalidRequest } from "../../errors/gateway-error.js";
import { type Endpoint, forMethod, type Surface } from "../surface.js";
import { geminiStructuredOutput } from "./gemini-structured-output.js";
import { parseCountTokens } from "./parse-count-tokens.js";
import { parseGenerateContent } from "./parse-generate-content.js";
import { renderGeminiError } from "./render-gemini-error.js";

const listRoute = /^\/(?:v1beta|v1|v1alpha)\/models$/;
const modelRoute = /^\/(v1beta|v1|v1alpha)\/models\/([^/]+?)(?::([A-Za-z]+))?$/;

const methods: Record<string, Endpoint> = {
  generateContent: {
    kind: "generate",
    parse: (body, path) => parseGenerateContent(body, modelOf(path), false),
    structuredOutput: geminiStructuredOutput,
  },
  streamGenerateContent: {
    kind: "generate",
    parse: (body, path) => parseGenerateContent(body, modelOf(path), true),
    structuredOutput: geminiStructuredOutput,
  },
  countTokens: { kind: "count", parse: (body, path) => parseCountTokens(body, modelOf(path)) },
};

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
  mount: "/gemini",
  match(method, path) {
    if (listRoute.test(path)) return forMethod(method, "GET", { kind: "proxy" });
    const route = modelRoute.exec(path);
    if (route === null) return undefined;
    const operation = route[3];
    if (operation === undefined) return forMethod(method, "GET", { kind: "proxy" });
    const endpoint = methods[operation];
    if (endpoint === undefined) return undefined;
    return forMethod(method, "POST", endpoint);
  },
  forwardedHeaders: ["x-goog-api-key", "authorization", "x-goog-api-client", "x-goog-user-project", "x-server-timeout"],
  hasCredential: (headers, url) =>
    headers.has("x-goog-api-key") || headers.has("authorization") || url.searchParams.has("key"),
  serverCredential: (key) => ["x-goog-api-key", key],
  renderError: renderGeminiError,
};
