import type { CountTokensResponse } from "@google/genai";
import { Hono } from "hono";
import { type GeminiStreamMode, generateRequestProblem, simulateGenerateContent } from "./gemini-generate.js";
import { handleJsonRequest } from "./handle-json-request.js";
import { isJsonObject, type JsonObject } from "./json-value.js";
import type { JsonBody } from "./read-json-body.js";
import type { RequestProblem } from "./request-problem.js";
import { estimatePromptTokens } from "./token-estimate.js";

const apiVersions = new Set(["v1beta", "v1"]);

/** The Gemini surface of the simulated provider, to be mounted at `/gemini`. */
export function createGeminiSimulator(): Hono {
  const app = new Hono();
  // The model segment holds a colon (`gemini-x:generateContent`), so take it whole and split on the last one.
  app.post("/:version/models/:target{.+}", (c) => {
    const target = c.req.param("target");
    const colon = target.lastIndexOf(":");
    if (!apiVersions.has(c.req.param("version")) || colon <= 0) return notFound();
    const model = target.slice(0, colon);
    const method = target.slice(colon + 1);
    const streamMode: GeminiStreamMode = c.req.query("alt") === "sse" ? "sse" : "json-array";
    switch (method) {
      case "generateContent":
        return handleJsonRequest(c.req.raw, {
          problemOf: generateRequestProblem,
          simulate: (input) => simulateGenerateContent(input, model, "none"),
          reject,
          normalize: withCamelCaseFields,
        });
      case "streamGenerateContent":
        return handleJsonRequest(c.req.raw, {
          problemOf: generateRequestProblem,
          simulate: (input) => simulateGenerateContent(input, model, streamMode),
          reject,
          normalize: withCamelCaseFields,
        });
      case "countTokens":
        return handleJsonRequest(c.req.raw, {
          problemOf: countTokensProblem,
          simulate: countTokens,
          reject,
          normalize: withCamelCaseFields,
        });
      default:
        return notFound();
    }
  });
  app.all("*", notFound);
  app.onError(() => geminiError(500, "INTERNAL", "The simulated Gemini API failed."));
  return app;
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

function notFound(): Response {
  return geminiError(404, "NOT_FOUND", "Unknown route of the simulated Gemini API.");
}

/** Gemini's native error body: `{error: {code, message, status}}`. */
function geminiError(code: number, status: string, message: string): Response {
  return Response.json({ error: { code, message, status } }, { status: code });
}

/**
 * Gemini accepts proto field names (`system_instruction`) beside JSON names
 * (`systemInstruction`); the simulator reads JSON names, so the fields it reads are renamed.
 * Schemas inside generationConfig are values, not fields, and keep their keys.
 */
function withCamelCaseFields(body: JsonObject): JsonObject {
  const renamed = camelCaseKeys(body);
  if (isJsonObject(renamed.generationConfig)) renamed.generationConfig = camelCaseKeys(renamed.generationConfig);
  if (isJsonObject(renamed.generateContentRequest)) {
    renamed.generateContentRequest = withCamelCaseFields(renamed.generateContentRequest);
  }
  return renamed;
}

function camelCaseKeys(object: JsonObject): JsonObject {
  const renamed: JsonObject = {};
  for (const [key, value] of Object.entries(object)) {
    renamed[key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase())] = value;
  }
  return renamed;
}
