import { describe, expect, it } from "vitest";
import { messagesStructuredOutput } from "../../src/surfaces/anthropic/messages-structured-output.js";
import { geminiStructuredOutput } from "../../src/surfaces/gemini/gemini-structured-output.js";
import { chatStructuredOutput } from "../../src/surfaces/openai/chat-structured-output.js";
import { responsesStructuredOutput } from "../../src/surfaces/openai/responses-structured-output.js";

// What each surface reads of its provider's refusal of a response schema: the place named and the quoted words
// (src/schema/schema-refusal.ts keeps of them only what the schema sent holds).

const sent = { type: "object", properties: { first: { type: "string" }, second: { anyOf: [{}, { minimum: 1 }] } } };
const openai = (message: string) => ({ error: { message, type: "invalid_request_error" } });

describe("a provider's refusal of the response schema, as each surface reads it", () => {
  it("OpenAI: the context tuple and the words after it; other 400s are no refusal", () => {
    const message =
      "Invalid schema for response_format 'x': In context=('properties', 'second'), 'minimum' is not permitted.";
    for (const output of [chatStructuredOutput, responsesStructuredOutput]) {
      expect(output.schemaRefusal(openai(message), sent)).toEqual({
        path: ["properties", "second"],
        words: ["minimum"],
      });
    }
    expect(chatStructuredOutput.schemaRefusal(openai("Unsupported value: 'temperature'."), sent)).toBeUndefined();
  });

  it("Gemini: a proto field path, a map's [i] as the i-th member and a list's [i] as its index", () => {
    const message =
      "Invalid JSON payload received. Unknown name \"minimum\" at 'generation_config.response_schema.properties[1].value.any_of[1]': Cannot find field.";
    const body = { error: { code: 400, status: "INVALID_ARGUMENT", message } };
    expect(geminiStructuredOutput.schemaRefusal(body, sent)).toEqual({
      path: ["properties", "second", "anyOf", "1"],
      words: ["minimum", "generation_config.response_schema.properties[1].value.any_of[1]"],
    });
    const other = { error: { code: 400, message: "* GenerateContentRequest.generation_config.temperature: too high" } };
    expect(geminiStructuredOutput.schemaRefusal(other, sent)).toBeUndefined();
  });

  it("Anthropic: the members after output_config.format.schema and the quoted words", () => {
    const message = "output_config.format.schema.properties.second: 'minimum' is not supported.";
    const body = { type: "error", error: { type: "invalid_request_error", message } };
    expect(messagesStructuredOutput.schemaRefusal(body, sent)).toEqual({
      path: ["properties", "second"],
      words: ["minimum"],
    });
  });
});
