import { isObject, type JsonObject } from "../../json/json-object.js";
import { quotedWords } from "../../schema/schema-refusal.js";
import { errorMessageOf } from "../error-message.js";
import { responseFacts, type StructuredOutput, tokenUsage } from "../surface.js";
import { textPlacer } from "../text-placer.js";

function textBlocks(response: JsonObject): JsonObject[] {
  const content = Array.isArray(response.content) ? response.content : [];
  return content.filter((block): block is JsonObject => isObject(block) && block.type === "text");
}

/** Messages: the schema in `output_config.format`, the answer in the text blocks. */
export const messagesStructuredOutput: StructuredOutput = {
  fullSchema: (call) => call.responseSchema,
  transport(body, fullSchema, _policy, native) {
    if (native) return undefined;
    const config = isObject(body.output_config) ? body.output_config : {};
    const format = { type: "json_schema", schema: fullSchema };
    return { body: { ...body, output_config: { ...config, format } }, omitted: [] };
  },
  responseFacts(body) {
    // A whole message, a stream's message_start (the message, its id) or its message_delta (the stop reason).
    const message = isObject(body.message) ? body.message : body;
    const delta = isObject(body.delta) ? body.delta : message;
    return responseFacts(message.id, [delta.stop_reason]);
  },
  usage(body) {
    // A whole message, a stream's message_start (which carries the message) or its message_delta (the output).
    const message = isObject(body.message) ? body.message : body;
    const usage = isObject(message.usage) ? message.usage : undefined;
    return usage === undefined ? undefined : tokenUsage(usage.input_tokens, usage.output_tokens);
  },
  stopReason(response) {
    const reason = response.stop_reason;
    return reason === "max_tokens" || reason === "refusal" || reason === "model_context_window_exceeded"
      ? reason
      : undefined;
  },
  answerTexts(response) {
    const blocks = textBlocks(response);
    return [blocks.length === 0 ? undefined : blocks.map((block) => String(block.text)).join("")];
  },
  withAnswerText(response, _index, text) {
    const place = textPlacer(text, (block) => block.type === "text");
    return { ...response, content: place(response.content as unknown[]) };
  },
  schemaRefusal(errorBody) {
    const message = errorMessageOf(errorBody);
    if (!/output_config|output_format|json_schema|grammar/i.test(message)) return undefined;
    // `output_config.format.schema.properties.name: …` names the place; the quoted words, the keyword.
    const field = /(?:output_config\.format|output_format)\.schema((?:\.[^\s.:]+)*)/.exec(message)?.[1] ?? "";
    return { path: field.split(".").slice(1), words: quotedWords(message) };
  },
  streamedText(event) {
    if (event.type !== "content_block_delta" || !isObject(event.delta)) return undefined;
    return event.delta.type === "text_delta" && typeof event.delta.text === "string" ? event.delta.text : undefined;
  },
};
