import type { Candidate, FinishReason, GenerateContentResponse } from "@google/genai";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import { isJsonObject, type JsonObject, lastUserText } from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { seedFromDigest } from "../../../simulated/request-digest.js";
import type { RequestProblem } from "../../../simulated/request-problem.js";
import { dataFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";
import { openApiToJsonSchema } from "../projection/openapi-to-json-schema.js";

/**
 * `GenerateContentResponse` as it travels: the SDK's class minus its getters, with the
 * finish reason as the enum's string value (a type-only import cannot name enum members).
 */
type WireCandidate = Omit<Candidate, "finishReason"> & { finishReason?: `${FinishReason}` };
type WireGenerateContentResponse = Pick<GenerateContentResponse, "usageMetadata" | "modelVersion" | "responseId"> & {
  candidates: WireCandidate[];
};

/** The response MIME types under which Gemini takes a response schema. */
const schemaMimeTypes = new Set(["application/json", "text/x.enum"]);

/** How a `:streamGenerateContent` call wants its frames: SSE with `alt=sse`, else one JSON array. */
export type GeminiStreamMode = "none" | "sse" | "json-array";

/** The first problem with a `generateContent` body, if any. */
export function generateRequestProblem(body: JsonObject): RequestProblem | undefined {
  if (body.contents === undefined || body.contents === null) return { kind: "missing", field: "contents" };
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return { kind: "invalid", field: "contents", expected: "a non-empty array" };
  }
  const config = body.generationConfig;
  if (!isJsonObject(config)) return undefined;
  const hasJsonSchema = config.responseJsonSchema !== undefined;
  const hasOpenApiSchema = config.responseSchema !== undefined;
  if (hasJsonSchema && hasOpenApiSchema) {
    return {
      kind: "invalid",
      field: "generationConfig",
      expected: "only one of responseSchema and responseJsonSchema",
    };
  }
  if ((hasJsonSchema || hasOpenApiSchema) && !schemaMimeTypes.has(String(config.responseMimeType))) {
    return {
      kind: "invalid",
      field: "generationConfig.responseMimeType",
      expected: '"application/json" or "text/x.enum" with a schema',
    };
  }
  return undefined;
}

/**
 * A simulated `generateContent` answer for `model`, whole or as the stream `mode` asks;
 * `cachedTokens` of a cached content the request names count in its prompt, as Gemini counts them.
 */
export function simulateGenerateContent(
  { body, digest }: JsonBody,
  model: string,
  mode: GeminiStreamMode,
  cachedTokens = 0,
): Response {
  const text = simulatedAnswer({
    lastUserText: lastUserText(body.contents, "parts", undefined),
    format: answerFormat(body.generationConfig),
    seed: seedFromDigest(digest),
  });
  const promptTokenCount = cachedTokens + estimatePromptTokens(body.systemInstruction, body.contents, body.tools);
  const cached = cachedTokens > 0 ? { cachedContentTokenCount: cachedTokens } : {};
  const candidatesTokenCount = estimateTokens(text);
  const frame = (part: string, last: boolean): WireGenerateContentResponse => ({
    candidates: [
      { content: { role: "model", parts: [{ text: part }] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) },
    ],
    usageMetadata: last
      ? { promptTokenCount, ...cached, candidatesTokenCount, totalTokenCount: promptTokenCount + candidatesTokenCount }
      : { promptTokenCount, ...cached, totalTokenCount: promptTokenCount },
    modelVersion: model,
    responseId: `sim${digest.slice(0, 24)}`,
  });
  if (mode === "none") return Response.json(frame(text, true));
  const deltas = textDeltas(text);
  const frames = deltas.map((delta, index) => frame(delta, index === deltas.length - 1));
  if (mode === "json-array") return Response.json(frames);
  return sseResponse(frames.map((value) => dataFrame(value, "\r\n\r\n")));
}

/** A `responseSchema` arrives as OpenAPI and is turned back into JSON Schema for the faker. */
function answerFormat(config: unknown): AnswerFormat {
  if (!isJsonObject(config)) return { kind: "text" };
  const schema =
    config.responseJsonSchema ??
    (config.responseSchema === undefined ? undefined : openApiToJsonSchema(config.responseSchema));
  if (config.responseMimeType === "text/x.enum" && schema !== undefined) return { kind: "enum-text", schema };
  if (config.responseMimeType !== "application/json") return { kind: "text" };
  return schema === undefined ? { kind: "json-object" } : { kind: "json-schema", schema };
}
