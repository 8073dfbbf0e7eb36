import { errorMessageOf } from "../error-message.js";
import type { StructuredOutput } from "../surface.js";
import { isObject, type JsonObject } from "../wire-fields.js";

function firstMessage(response: JsonObject): JsonObject | undefined {
  const choice = Array.isArray(response.choices) ? response.choices[0] : undefined;
  return isObject(choice) && isObject(choice.message) ? choice.message : undefined;
}

/** Chat Completions: the schema in `response_format.json_schema`, the answer in the first choice's content. */
export const chatStructuredOutput: StructuredOutput = {
  fullSchema: (call) => call.responseSchema,
  transport(body, fullSchema, _policy, native) {
    if (native) return undefined;
    const format = {
      type: "json_schema",
      json_schema: { name: "promptgate_schema", schema: fullSchema, strict: false },
    };
    return { body: { ...body, response_format: format }, omitted: [] };
  },
  answerText(response) {
    const content = firstMessage(response)?.content;
    return typeof content === "string" ? content : undefined;
  },
  withAnswerText(response, text) {
    const choices = response.choices as JsonObject[];
    const [first, ...rest] = choices;
    const message = { ...firstMessage(response), content: text };
    return { ...response, choices: [{ ...first, message }, ...rest] };
  },
  rejectsSchema: (errorBody) => /response_format|json_schema|invalid schema/i.test(errorMessageOf(errorBody)),
  streamedText(event) {
    const choice = Array.isArray(event.choices) ? event.choices[0] : undefined;
    const delta = isObject(choice) && isObject(choice.delta) ? choice.delta.content : undefined;
    return typeof delta === "string" ? delta : undefined;
  },
};
