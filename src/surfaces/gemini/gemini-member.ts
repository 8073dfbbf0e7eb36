import { invalidRequest } from "../../errors/gateway-error.js";
import type { JsonObject } from "../../json/json-object.js";

/**
 * A member of a Gemini body by its JSON name (`systemInstruction`) or its proto name
 * (`system_instruction`): the API accepts both, so a gateway that read only one could be
 * bypassed. Both at once is a conflict.
 */
export function geminiMember(object: JsonObject, camelName: string, path: string): unknown {
  const snakeName = camelName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  const camel = object[camelName];
  const snake = snakeName === camelName ? undefined : object[snakeName];
  if (camel !== undefined && snake !== undefined) {
    throw invalidRequest(
      `'${path}${camelName}' and '${path}${snakeName}' must not both be set.`,
      `${path}${camelName}`,
    );
  }
  return camel ?? snake;
}
