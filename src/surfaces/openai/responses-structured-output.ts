import { isObject, type JsonObject } from "../../json/json-object.js";
import { responseFacts, type StructuredOutput, tokenUsage } from "../surface.js";
import { textPlacer } from "../text-placer.js";
import { openaiSchemaRefusal } from "./openai-schema-refusal.js";

function outputTextParts(response: JsonObject): JsonObject[] {
  const parts: JsonObject[] = [];
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (!isObject(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (isObject(part) && part.type === "output_text" && typeof part.text === "string") parts.push(part);
    }
  }
  return parts;
}

/** Responses: the schema in `text.format`, the answer in the output messages' `output_text` parts. */
export const responsesStructuredOutput: StructuredOutput = {
  fullSchema: (call) => call.responseSchema,
  transport(body, fullSchema, _policy, native) {
    if (native) return undefined;
    const text = isObject(body.text) ? body.text : {};
    const format = { type: "json_schema", name: "promptgate_schema", schema: fullSchema, strict: false };
    return { body: { ...body, text: { ...text, format } }, omitted: [] };
  },
  responseFacts(body) {
    // A whole response, or a stream event carrying one (response.created … response.completed).
    const response = isObject(body.response) ? body.response : body;
    const status = response.status;
    const ended = status === "completed" || status === "incomplete" || status === "failed" ? status : undefined;
    return responseFacts(response.id, [ended]);
  },
  usage(body) {
    // A whole response, or a stream's final event, which carries the response.
    const response = isObject(body.response) ? body.response : body;
    const usage = isObject(response.usage) ? response.usage : undefined;
    return usage === undefined ? undefined : tokenUsage(usage.input_tokens, usage.output_tokens);
  },
  stopReason(response) {
    if (response.status !== "incomplete") return undefined;
    const reason = isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return typeof reason === "string" ? reason : "incomplete";
  },
  answerTexts(response) {
    const parts = outputTextParts(response);
    return [parts.length === 0 ? undefined : parts.map((part) => part.text).join("")];
  },
  withAnswerText(response, _index, text) {
    const place = textPlacer(text, (part) => part.type === "output_text");
    const output = (response.output as unknown[]).map((item) => {
      if (!isObject(item) || item.type !== "message" || !Array.isArray(item.content)) return item;
      return { ...item, content: place(item.content) };
    });
    const replaced: JsonObject = { ...response, output };
    if (typeof response.output_text === "string") replaced.output_text = text;
    return replaced;
  },
  schemaRefusal: openaiSchemaRefusal(/text\.format|json_schema|invalid schema/i),
  streamedText(event) {
    return event.type === "response.output_text.delta" && typeof event.delta === "string" ? event.delta : undefined;
  },
};
