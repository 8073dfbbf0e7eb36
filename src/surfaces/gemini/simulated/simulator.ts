import type { CountTokensResponse } from "@google/genai";
import { Hono } from "hono";
import { handleJsonRequest } from "../../../simulated/handle-json-request.js";
import { isJsonObject, type JsonObject } from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import type { RequestProblem } from "../../../simulated/request-problem.js";
import { type SimulatedClock, systemClock } from "../../../simulated/simulated-clock.js";
import { estimatePromptTokens } from "../../../simulated/token-estimate.js";
import { toldSchema } from "../../../simulated/told-schema.js";
import { createCachedContents, type SimulatedCachedContents } from "./cached-contents.js";
import { geminiError, geminiUnknownRoute } from "./error.js";
import { withCamelCaseFields } from "./field-names.js";
import { type GeminiStreamMode, generateRequestProblem, simulateGenerateContent } from "./generate.js";
import { mountModels } from "./models.js";

const apiVersions = new Set(["v1beta", "v1"]);

/**
 * The Gemini surface of the simulated provider, to be mounted at `/gemini`. Its cached
 * contents live in memory, per simulator, and expire on `clock`.
 */
export function createGeminiSimulator(clock: SimulatedClock = systemClock): Hono {
  const app = new Hono();
  const caches = createCachedContents(clock);
  caches.mount(app, (version) => apiVersions.has(version));
  mountModels(app, (version) => apiVersions.has(version));
  // The model segment holds a colon (`gemini-x:generateContent`), so take it whole and split on the last one.
  app.post("/:version/models/:target{.+}", (c) => {
    const target = c.req.param("target");
    const colon = target.lastIndexOf(":");
    if (!apiVersions.has(c.req.param("version")) || colon <= 0) return geminiUnknownRoute();
    const model = target.slice(0, colon);
    const method = target.slice(colon + 1);
    const streamMode: GeminiStreamMode = c.req.query("alt") === "sse" ? "sse" : "json-array";
    switch (method) {
      case "generateContent":
        return generate(c.req.raw, caches, model, "none");
      case "streamGenerateContent":
        return generate(c.req.raw, caches, model, streamMode);
      case "countTokens":
        return handleJsonRequest(c.req.raw, {
          problemOf: countTokensProblem,
          simulate: countTokens,
          reject,
          normalize: withCamelCaseFields,
        });
      default:
        return geminiUnknownRoute();
    }
  });
  app.all("*", geminiUnknownRoute);
  app.onError(() => geminiError(500, "INTERNAL", "The simulated Gemini API failed."));
  return app;
}

/** A generateContent, answered with the cache it names counted in its usage, or refused as Gemini refuses it. */
function generate(
  request: Request,
  caches: SimulatedCachedContents,
  model: string,
  mode: GeminiStreamMode,
): Promise<Response> {
  return handleJsonRequest(request, {
    problemOf: generateRequestProblem,
    simulate: (input) => {
      const cache = caches.use(input.body, model);
      if ("refusal" in cache) return cache.refusal;
      return simulateGenerateContent(input, model, mode, cache.tokens, toldSchema(request.headers));
    },
    reject,
    normalize: withCamelCaseFields,
  });
}

/** `countTokens` takes either `contents` or a whole `generateContentRequest`, not both. */
function countTokensProblem(body: JsonObject): RequestProblem | undefined {
  const hasContents = body.contents !== undefined;
  const hasRequest = body.generateContentRequest !== undefined;
  if (hasContents && hasRequest) {
    return { kind: "invalid", field: "contents", expected: "no generateContentRequest beside it" };
  }
  if (hasRequest) {
    return isJsonObject(body.generateContentRequest)
      ? generateRequestProblem(body.generateContentRequest)
      : { kind: "invalid", field: "generateContentRequest", expected: "an object" };
  }
  if (!hasContents) return { kind: "missing", field: "contents" };
  return Array.isArray(body.contents) ? undefined : { kind: "invalid", field: "contents", expected: "an array" };
}

function countTokens({ body }: JsonBody): Response {
  const request = isJsonObject(body.generateContentRequest) ? body.generateContentRequest : body;
  const counted: CountTokensResponse = {
    totalTokens: estimatePromptTokens(request.systemInstruction, request.contents, request.tools),
  };
  return Response.json(counted);
}

/** A refused request in Gemini's native 400 shape. */
function reject(problem: RequestProblem): Response {
  switch (problem.kind) {
    case "unparseable":
      return geminiError(400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
    case "missing":
      return geminiError(400, "INVALID_ARGUMENT", `* GenerateContentRequest.${problem.field}: is not specified`);
    case "invalid":
      return geminiError(
        400,
        "INVALID_ARGUMENT",
        `* GenerateContentRequest.${problem.field}: must be ${problem.expected}`,
      );
  }
}
