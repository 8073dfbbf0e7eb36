import type {
  Candidate,
  FinishReason,
  GenerateContentResponse,
  GenerateContentResponseUsageMetadata,
  MediaModality,
  Part,
} from "@google/genai";
import { type AnswerFormat, simulatedAnswer } from "../../../simulated/answer.js";
import { isJsonObject, type JsonObject, lastTurn, lastUserText } from "../../../simulated/json-value.js";
import type { JsonBody } from "../../../simulated/read-json-body.js";
import { idAlphabets, idFromDigest, seedFromDigest } from "../../../simulated/request-digest.js";
import type { RequestProblem } from "../../../simulated/request-problem.js";
import { dataFrame, sseResponse, textDeltas } from "../../../simulated/sse.js";
import { estimatePromptTokens, estimateTokens } from "../../../simulated/token-estimate.js";
import { type DeclaredTool, simulatedToolCall, type ToolChoice } from "../../../simulated/tool-call.js";
import { openApiToJsonSchema } from "../projection/openapi-to-json-schema.js";

/**
 * `GenerateContentResponse` as it travels: the SDK's class minus its getters, with the finish
 * reason and modalities as the enums' string values (a type-only import cannot name enum members).
 */
type WireCandidate = Omit<Candidate, "finishReason"> & { finishReason?: `${FinishReason}` };
type WireUsageMetadata = Omit<GenerateContentResponseUsageMetadata, "promptTokensDetails"> & {
  promptTokensDetails: { modality: `${MediaModality}`; tokenCount: number }[];
};
type WireGenerateContentResponse = Pick<GenerateContentResponse, "modelVersion" | "responseId"> & {
  candidates: WireCandidate[];
  usageMetadata: WireUsageMetadata;
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
 * A `functionCall` part instead of text where `simulatedToolCall` decides on one; Gemini streams a
 * call whole, in one frame. `toldSchema`, the full schema the gateway told (`toldSchemaHeader`), is answered in
 * place of the projection the body carries.
 */
export function simulateGenerateContent(
  { body, digest }: JsonBody,
  model: string,
  mode: GeminiStreamMode,
  cachedTokens = 0,
  toldSchema?: unknown,
): Response {
  const seed = seedFromDigest(digest);
  const userText = lastUserText(body.contents, "parts", undefined);
  const call = simulatedToolCall({
    tools: functionDeclarations(body.tools),
    choice: toolChoiceOf(body.toolConfig),
    endsWithToolResult: endsWithFunctionResponse(body.contents),
    lastUserText: userText,
    seed,
  });
  const text =
    call === undefined
      ? simulatedAnswer({ lastUserText: userText, format: answerFormat(body.generationConfig, toldSchema), seed })
      : `${call.name}${call.arguments}`;
  const promptTokenCount = cachedTokens + estimatePromptTokens(body.systemInstruction, body.contents, body.tools);
  const cached = cachedTokens > 0 ? { cachedContentTokenCount: cachedTokens } : {};
  const promptTokensDetails: WireUsageMetadata["promptTokensDetails"] = [
    { modality: "TEXT", tokenCount: promptTokenCount },
  ];
  const responseId = idFromDigest(digest, 23, idAlphabets.base64url);
  /** A frame with one part, reporting the tokens generated so far, as each of Gemini's streamed frames does. */
  const frame = (part: Part, generatedSoFar: string, last: boolean): WireGenerateContentResponse => {
    const candidatesTokenCount = estimateTokens(generatedSoFar);
    return {
      candidates: [{ content: { role: "model", parts: [part] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
      usageMetadata: {
        promptTokenCount,
        ...cached,
        candidatesTokenCount,
        totalTokenCount: promptTokenCount + candidatesTokenCount,
        promptTokensDetails,
      },
      modelVersion: model,
      responseId,
    };
  };
  const parts: Part[] =
    call !== undefined
      ? [{ functionCall: { name: call.name, args: JSON.parse(call.arguments) as Record<string, unknown> } }]
      : mode === "none"
        ? [{ text }]
        : textDeltas(text).map((delta) => ({ text: delta }));
  let generated = "";
  const frames = parts.map((part, index) => {
    generated += part.text ?? "";
    return frame(part, part.text === undefined ? text : generated, index === parts.length - 1);
  });
  if (mode === "none") return Response.json(frames[0]);
  if (mode === "json-array") return Response.json(frames);
  return sseResponse(frames.map((value) => dataFrame(value, "\r\n\r\n")));
}

/** Every declared function of `tools[].functionDeclarations`, its parameters as JSON Schema. */
function functionDeclarations(tools: unknown): DeclaredTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter(isJsonObject)
    .flatMap((tool) => (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : []))
    .filter(isJsonObject)
    .flatMap((declared) => {
      if (typeof declared.name !== "string") return [];
      const parameters =
        declared.parametersJsonSchema ??
        (declared.parameters === undefined ? undefined : openApiToJsonSchema(declared.parameters));
      return [{ name: declared.name, parameters }];
    });
}

/** `toolConfig.functionCallingConfig`: mode `NONE`, or `ANY` (limited to `allowedFunctionNames`), else the model decides. */
function toolChoiceOf(toolConfig: unknown): ToolChoice {
  const config = isJsonObject(toolConfig) ? toolConfig.functionCallingConfig : undefined;
  if (!isJsonObject(config)) return { kind: "auto" };
  if (config.mode === "NONE") return { kind: "none" };
  if (config.mode !== "ANY") return { kind: "auto" };
  const [allowed] = Array.isArray(config.allowedFunctionNames) ? config.allowedFunctionNames : [];
  return typeof allowed === "string" ? { kind: "named", name: allowed } : { kind: "any" };
}

/** Whether the last content hands back a function's result (`functionResponse` parts). */
function endsWithFunctionResponse(contents: unknown): boolean {
  const parts = lastTurn(contents)?.parts;
  return Array.isArray(parts) && parts.some((part) => isJsonObject(part) && part.functionResponse !== undefined);
}

/**
 * A `responseSchema` arrives as OpenAPI and is turned back into JSON Schema for the faker; a schema the gateway told
 * takes the place of either.
 */
function answerFormat(config: unknown, toldSchema: unknown): AnswerFormat {
  if (!isJsonObject(config)) return { kind: "text" };
  const sent =
    config.responseJsonSchema ??
    (config.responseSchema === undefined ? undefined : openApiToJsonSchema(config.responseSchema));
  const schema = sent === undefined ? undefined : (toldSchema ?? sent);
  if (config.responseMimeType === "text/x.enum" && schema !== undefined) return { kind: "enum-text", schema };
  if (config.responseMimeType !== "application/json") return { kind: "text" };
  return schema === undefined ? { kind: "json-object" } : { kind: "json-schema", schema };
}
