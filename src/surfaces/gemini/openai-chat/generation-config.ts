import { invalidRequest } from "../../../errors/gateway-error.js";
import type { JsonObject } from "../../../json/json-object.js";
import type { ReasoningLevel, TranslationContext } from "../../translation.js";
import { asArray, asObject, asString, optionalObject } from "../../wire-fields.js";
import { isSet } from "./is-set.js";

/**
 * Gemini `generationConfig` from the Chat Completions sampling, length, stop, format, logprob and
 * reasoning parameters, and the thinking budget each reasoning level stands for.
 */

/** `generationConfig.thinkingConfig.thinkingBudget` (tokens) for each reasoning level. */
export const geminiThinkingBudgets: Record<ReasoningLevel, number> = {
  none: 0,
  low: 1024,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32768,
};

/** `generationConfig` from the sampling, length, format, logprob and reasoning parameters. */
export function generationConfigOf(body: JsonObject, context: TranslationContext): JsonObject {
  const config: JsonObject = {};
  // A number the client set, checked: Gemini would refuse a wrong type, and the gateway names the field first.
  const set = (name: string, param: string, integer = false) => {
    const value = body[param];
    if (!isSet(value)) return;
    if (typeof value !== "number" || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
      throw invalidRequest(`'${param}' must be ${integer ? "a whole number" : "a number"}. Nothing was sent.`, param);
    }
    config[name] = value;
  };
  set("maxOutputTokens", isSet(body.max_completion_tokens) ? "max_completion_tokens" : "max_tokens", true);
  set("temperature", "temperature");
  set("topP", "top_p");
  if (isSet(body.stop)) {
    const stops = typeof body.stop === "string" ? [body.stop] : asArray(body.stop, "stop");
    if (stops.length > 0) config.stopSequences = stops.map((stop, i) => asString(stop, `stop[${i}]`));
  }
  set("candidateCount", "n", true);
  set("seed", "seed", true);
  set("presencePenalty", "presence_penalty");
  set("frequencyPenalty", "frequency_penalty");
  if (body.logprobs === true) config.responseLogprobs = true;
  if (typeof body.top_logprobs === "number" && body.top_logprobs > 0) config.logprobs = body.top_logprobs;
  Object.assign(config, responseFormatConfig(optionalObject(body.response_format, "response_format")));
  if (context.reasoning !== undefined) {
    config.thinkingConfig = { thinkingBudget: geminiThinkingBudgets[context.reasoning] };
  }
  return config;
}

/** `responseMimeType` (and the full schema as `responseJsonSchema`) for a response format. */
function responseFormatConfig(format: JsonObject | undefined): JsonObject {
  switch (format?.type) {
    case undefined:
    case "text":
      return {};
    case "json_object":
      return { responseMimeType: "application/json" };
    case "json_schema": {
      const jsonSchema = asObject(format.json_schema, "response_format.json_schema");
      const config: JsonObject = { responseMimeType: "application/json" };
      if (isSet(jsonSchema.schema)) config.responseJsonSchema = jsonSchema.schema;
      return config;
    }
    default:
      throw invalidRequest("'response_format.type' must be text, json_object or json_schema.", "response_format.type");
  }
}
