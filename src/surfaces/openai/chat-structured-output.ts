import { isObject, type JsonObject } from "../../json/json-object.js";
import { responseFacts, type StructuredOutput, tokenUsage } from "../surface.js";
import { openaiSchemaRefusal } from "./openai-schema-refusal.js";

function messageOf(choice: unknown): JsonObject | undefined {
  return isObject(choice) && isObject(choice.message) ? choice.message : undefined;
}

/** Chat Completions: the schema in `response_format.json_schema`, an answer in each choice's content. */
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
  responseFacts(body) {
    const choices = Array.isArray(body.choices) ? body.choices : [];
    return responseFacts(
      body.id,
      choices.map((choice) => (isObject(choice) ? choice.finish_reason : undefined)),
    );
  },
  usage(body) {
    const usage = isObject(body.usage) ? body.usage : undefined;
    return usage === undefined ? undefined : tokenUsage(usage.prompt_tokens, usage.completion_tokens);
  },
  stopReason(response, index) {
    const choice = Array.isArray(response.choices) ? response.choices[index] : undefined;
    const reason = isObject(choice) ? choice.finish_reason : undefined;
    return reason === "length" || reason === "content_filter" ? reason : undefined;
  },
  answerTexts(response) {
    const choices = Array.isArray(response.choices) ? response.choices : [];
    return choices.map((choice) => {
      const content = messageOf(choice)?.content;
      return typeof content === "string" ? content : undefined;
    });
  },
  withAnswerText(response, index, text) {
    const choices = (response.choices as JsonObject[]).map((choice, at) =>
      at === index ? { ...choice, message: { ...messageOf(choice), content: text } } : choice,
    );
    return { ...response, choices };
  },
  schemaRefusal: openaiSchemaRefusal(/response_format|json_schema|invalid schema/i),
  streamedText(event) {
    const choice = Array.isArray(event.choices) ? event.choices[0] : undefined;
    const delta = isObject(choice) && isObject(choice.delta) ? choice.delta.content : undefined;
    return typeof delta === "string" ? delta : undefined;
  },
};
