import type { JsonObject } from "../../json/json-object.js";
import type { RefusalText } from "../../schema/schema-refusal.js";
import { quotedWords } from "../../schema/schema-refusal.js";
import { errorMessageOf } from "../error-message.js";

/**
 * Reads OpenAI's refusal of a response schema, where `about` tells its message from other 400s: the place its
 * `In context=('properties', 'foo')` names, and the quoted words after it (`'minimum' is not permitted`).
 */
export function openaiSchemaRefusal(about: RegExp): (errorBody: JsonObject) => RefusalText | undefined {
  return (errorBody) => {
    const message = errorMessageOf(errorBody);
    if (!about.test(message)) return undefined;
    const context = /In context=\(([^)]*)\)/.exec(message);
    if (context === null) return { path: [], words: quotedWords(message) };
    return {
      path: quotedWords(context[1] ?? ""),
      words: quotedWords(message.slice(context.index + context[0].length)),
    };
  };
}
