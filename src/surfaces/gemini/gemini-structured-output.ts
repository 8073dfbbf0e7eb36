import { canonicalJson } from "../../json/canonical-json.js";
import { isObject, type JsonObject } from "../../json/json-object.js";
import { responseFacts, type StructuredOutput, tokenUsage } from "../surface.js";
import { textPlacer } from "../text-placer.js";
import { geminiMember } from "./gemini-member.js";
import { geminiPolicyOf } from "./gemini-policy.js";
import { geminiSchemaRefusal } from "./gemini-schema-refusal.js";
import { openApiToJsonSchema } from "./projection/openapi-to-json-schema.js";
import { projectForGemini } from "./projection/projection.js";

const schemaKeys = ["responseJsonSchema", "response_json_schema", "responseSchema", "response_schema"];

function generationConfigKey(body: JsonObject): string {
  return body.generationConfig === undefined && body.generation_config !== undefined
    ? "generation_config"
    : "generationConfig";
}

function partsOf(candidate: unknown): unknown[] {
  if (!isObject(candidate) || !isObject(candidate.content) || !Array.isArray(candidate.content.parts)) return [];
  return candidate.content.parts;
}

const isAnswerPart = (part: JsonObject) => typeof part.text === "string" && part.thought !== true;

/** The non-thought text of a candidate, or undefined when it has none. */
function candidateText(candidate: unknown): string | undefined {
  const parts = partsOf(candidate).filter((part): part is JsonObject => isObject(part) && isAnswerPart(part));
  return parts.length === 0 ? undefined : parts.map((part) => part.text).join("");
}

function candidatesOf(response: JsonObject): unknown[] {
  return Array.isArray(response.candidates) ? response.candidates : [];
}

/**
 * Gemini: the provider receives the policy's projection of the full schema in the policy's
 * field; a client's OpenAPI `responseSchema` is read back as JSON Schema for validation.
 */
export const geminiStructuredOutput: StructuredOutput = {
  fullSchema(call, body) {
    if (call.responseSchema === undefined) return undefined;
    const config = body[generationConfigKey(body)] as JsonObject;
    const openApi = geminiMember(config, "responseSchema", "generationConfig.") !== undefined;
    return openApi ? openApiToJsonSchema(call.responseSchema) : call.responseSchema;
  },
  transport(body, fullSchema, policy, native) {
    const { projection, schema_field: field, unions } = geminiPolicyOf(policy);
    if (native && projection === "none") return undefined;
    const key = generationConfigKey(body);
    const config: JsonObject = { ...(isObject(body[key]) ? body[key] : {}) };
    if (config.responseMimeType === "text/x.enum" || config.response_mime_type === "text/x.enum") return undefined;
    const projected = projectForGemini(fullSchema, projection, field, { unions });
    const sentAs = geminiMember(config, field, "generationConfig.");
    // A projection equal to what the client already sends in that field changes nothing.
    if (native && sentAs !== undefined && canonicalJson(sentAs) === canonicalJson(projected.schema)) return undefined;
    for (const schemaKey of schemaKeys) delete config[schemaKey];
    config[field] = projected.schema;
    if (config.response_mime_type === undefined) config.responseMimeType = "application/json";
    return { body: { ...body, [key]: config }, omitted: projected.omitted };
  },
  answerTexts: (response) => candidatesOf(response).map(candidateText),
  responseFacts(body) {
    const reasons = candidatesOf(body).map((candidate) => (isObject(candidate) ? candidate.finishReason : undefined));
    return responseFacts(body.responseId, reasons);
  },
  usage(body) {
    const usage = isObject(body.usageMetadata) ? body.usageMetadata : undefined;
    return usage === undefined ? undefined : tokenUsage(usage.promptTokenCount, usage.candidatesTokenCount);
  },
  stopReason(response, index) {
    const candidate = candidatesOf(response)[index];
    const reason = isObject(candidate) ? candidate.finishReason : undefined;
    // Every reason but STOP (and the unspecified one) ends an answer before its end: MAX_TOKENS, SAFETY, RECITATION …
    return typeof reason === "string" && reason !== "STOP" && reason !== "FINISH_REASON_UNSPECIFIED"
      ? reason
      : undefined;
  },
  withAnswerText(response, index, text) {
    const candidates = candidatesOf(response).map((candidate, at) => {
      if (at !== index || !isObject(candidate)) return candidate;
      const parts = textPlacer(text, isAnswerPart)(partsOf(candidate));
      return { ...candidate, content: { ...(candidate.content as JsonObject), parts } };
    });
    return { ...response, candidates };
  },
  streamedText: (event) => candidateText(candidatesOf(event)[0]),
  schemaRefusal: geminiSchemaRefusal,
};
