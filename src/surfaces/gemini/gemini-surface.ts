import type { Endpoint, Surface } from "../surface.js";
import { parseCountTokens } from "./parse-count-tokens.js";
import { parseGenerateContent } from "./parse-generate-content.js";
import { renderGeminiError } from "./render-gemini-error.js";

const listRoute = /^\/(?:v1beta|v1|v1alpha)\/models$/;
const modelRoute = /^\/(v1beta|v1|v1alpha)\/models\/([^/]+?)(?::([A-Za-z]+))?$/;

const methods: Record<string, Endpoint> = {
  generateContent: { kind: "generate", parse: (body, path) => parseGenerateContent(body, modelOf(path), false) },
  streamGenerateContent: { kind: "generate", parse: (body, path) => parseGenerateContent(body, modelOf(path), true) },
  countTokens: { kind: "count", parse: (body, path) => parseCountTokens(body, modelOf(path)) },
};

function modelOf(path: string): string | undefined {
  const model = modelRoute.exec(path)?.[2];
  return model === undefined ? undefined : decodeURIComponent(model);
}

/** The Gemini API (generateContent, streamGenerateContent, countTokens, models) at `/gemini`. */
export const geminiSurface: Surface = {
  name: "gemini",
  mount: "/gemini",
  match(method, path) {
    if (listRoute.test(path)) return method === "GET" ? { kind: "proxy" } : "method-not-allowed";
    const route = modelRoute.exec(path);
    if (route === null) return undefined;
    const operation = route[3];
    if (operation === undefined) return method === "GET" ? { kind: "proxy" } : "method-not-allowed";
    const endpoint = methods[operation];
    if (endpoint === undefined) return undefined;
    return method === "POST" ? endpoint : "method-not-allowed";
  },
  forwardedHeaders: ["x-goog-api-key", "authorization", "x-goog-api-client", "x-goog-user-project", "x-server-timeout"],
  hasCredential: (headers, url) =>
    headers.has("x-goog-api-key") || headers.has("authorization") || url.searchParams.has("key"),
  serverCredential: (key) => ["x-goog-api-key", key],
  renderError: renderGeminiError,
};
