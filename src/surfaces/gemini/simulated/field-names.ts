import { isJsonObject, type JsonObject } from "../../../simulated/json-value.js";

/**
 * Gemini accepts proto field names (`system_instruction`) beside JSON names
 * (`systemInstruction`); the simulator reads JSON names, so the fields it reads are renamed.
 * Schemas inside generationConfig are values, not fields, and keep their keys.
 */
export function withCamelCaseFields(body: JsonObject): JsonObject {
  const renamed = camelCaseKeys(body);
  if (isJsonObject(renamed.generationConfig)) renamed.generationConfig = camelCaseKeys(renamed.generationConfig);
  if (isJsonObject(renamed.generateContentRequest)) {
    renamed.generateContentRequest = withCamelCaseFields(renamed.generateContentRequest);
  }
  return renamed;
}

/** The object with its own keys (not nested ones) renamed from snake_case to camelCase. */
export function camelCaseKeys(object: JsonObject): JsonObject {
  const renamed: JsonObject = {};
  for (const [key, value] of Object.entries(object)) {
    renamed[key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase())] = value;
  }
  return renamed;
}
