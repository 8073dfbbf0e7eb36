import { canonicalJson } from "../../json/canonical-json.js";
import { projectForGemini } from "../../schema/gemini-projection.js";
import { openApiToJsonSchema } from "../../schema/openapi-to-json-schema.js";
import { errorMessageOf } from "../error-message.js";
import type { StructuredOutput } from "../surface.js";
import { textPlacer } from "../text-placer.js";
import { isObject, type JsonObject } from "../wire-fields.js";
import { geminiMember } from "./gemini-member.js";

const schemaKeys = ["responseJsonSchema", "response_json_schema", "responseSchema", "response_schema"];

function generationConfigKey(body: JsonObject): string {
  return body.generationConfig === undefined && body.generation_config !== undefined
    ? "generation_config"
    : "generationConfig";
}

function answerParts(response: JsonObject): unknown[] | undefined {
  const candidate = Array.isArray(response.candidates) ? response.candidates[0] : undefined;
  if (!isObject(candidate) || !isObject(candidate.content) || !Array.isArray(candidate.content.parts)) return undefined;
  return candidate.content.parts;
}

const isAnswerPart = (part: JsonObject) => typeof part.text === "string" && part.thought !== true;

/** The non-thought text of the first candidate, or undefined when it has none. */
function candidateText(response: JsonObject): string | undefined {
  const parts = (answerParts(response) ?? []).filter(
    (part): part is JsonObject => isObject(part) && isAnswerPart(part),
  );
  return parts.length === 0 ? undefined : parts.map((part) => part.text).join("");
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
    const { projection, schema_field: field } = policy.gemini;
    if (native && projection === "none") return undefined;
    const key = generationConfigKey(body);
    const config: JsonObject = { ...(isObject(body[key]) ? body[key] : {}) };
    if (config.responseMimeType === "text/x.enum" || config.response_mime_type === "text/x.enum") return undefined;
    const projected = projectForGemini(fullSchema, projection, field);
    const sentAs = geminiMember(config, field, "generationConfig.");
    // A projection equal to what the client already sends in that field changes nothing.
    if (native && sentAs !== undefined && canonicalJson(sentAs) === canonicalJson(projected.schema)) return undefined;
    for (const schemaKey of schemaKeys) delete config[schemaKey];
    config[field] = projected.schema;
    if (config.response_mime_type === undefined) config.responseMimeType = "application/json";
    return { body: { ...body, [key]: config }, omitted: projected.omitted };
  },
  answerText: candidateText,
  withAnswerText(response, text) {
    const [candidate, ...rest] = response.candidates as JsonObject[];
    const content = candidate?.content as JsonObject;
    const parts = textPlacer(text, isAnswerPart)(answerParts(response) ?? []);
    return { ...response, candidates: [{ ...candidate, content: { ...content, parts } }, ...rest] };
  },
  streamedText: candidateText,
  rejectsSchema: (errorBody) =>
    /response_?(json_?)?schema|generation_?config|nesting depth|too many states/i.test(errorMessageOf(errorBody)),
};
