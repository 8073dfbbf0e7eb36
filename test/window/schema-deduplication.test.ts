import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { containsJsonValue } from "../../src/json/embedded-json.js";
import { parseMessages } from "../../src/surfaces/anthropic/messages-body.js";
import { parseGenerateContent } from "../../src/surfaces/gemini/parse-generate-content.js";
import { parseChatCompletion } from "../../src/surfaces/openai/chat-completion-body.js";
import { parseResponseCreate } from "../../src/surfaces/openai/response-create-body.js";
import { measure, noCachedPrefix } from "../../src/window/prompt-size.js";
import { boundedPolicy, logicalCall } from "./fixtures.js";

const schema = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "number", minimum: 0, maximum: 1 } },
  required: ["answer", "confidence"],
};
const compactSchema = JSON.stringify(schema);

/** The same schema with every object's keys in reverse order, pretty-printed with two spaces. */
const reorderedPrettySchema = `{
  "required": ["answer", "confidence"],
  "properties": {
    "confidence": { "maximum": 1, "minimum": 0, "type": "number" },
    "answer": { "type": "string" }
  },
  "type": "object"
}`;

const preflight = { check: "preflight", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;
const provider = { check: "provider", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;

describe("canonicalJson", () => {
  it("writes JSON without whitespace", () => {
    expect(canonicalJson({ a: [1, 2] })).toBe('{"a":[1,2]}');
  });

  it("sorts object keys at every level", () => {
    expect(canonicalJson({ b: { d: 1, c: 2 }, a: [{ f: 1, e: 2 }] })).toBe('{"a":[{"e":2,"f":1}],"b":{"c":2,"d":1}}');
  });

  it("keeps the order of array elements", () => {
    expect(canonicalJson(["b", "a"])).toBe('["b","a"]');
  });

  it("gives equal text for objects that differ only in key order", () => {
    expect(canonicalJson(JSON.parse(reorderedPrettySchema))).toBe(canonicalJson(schema));
  });

  it("writes scalars as JSON", () => {
    expect(canonicalJson("é")).toBe('"é"');
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson(1.5)).toBe("1.5");
  });

  it("turns undefined into the empty string", () => {
    expect(canonicalJson(undefined)).toBe("");
  });
});

describe("containsJsonValue", () => {
  it("finds the value written compactly in the text", () => {
    expect(containsJsonValue(`Answer with ${compactSchema} only.`, schema)).toBe(true);
  });

  it("finds the value pretty-printed with a different key order", () => {
    expect(containsJsonValue(`Answer in this shape:\n${reorderedPrettySchema}\nNothing else.`, schema)).toBe(true);
  });

  it("finds the value when the text is exactly the value", () => {
    expect(containsJsonValue(reorderedPrettySchema, schema)).toBe(true);
  });

  it("finds the value nested inside a larger JSON object of the text", () => {
    const text = JSON.stringify({ instructions: "x", schema: JSON.parse(reorderedPrettySchema) }, null, 2);
    expect(containsJsonValue(text, schema)).toBe(true);
  });

  it("finds the value after an unrelated balanced object in the text", () => {
    expect(containsJsonValue(`Example {"a": 1}; schema ${reorderedPrettySchema}`, schema)).toBe(true);
  });

  it("finds the value after a stray closing brace in prose", () => {
    expect(containsJsonValue(`Smiley :-} then ${reorderedPrettySchema}`, schema)).toBe(true);
  });

  it("finds the value after an unclosed opening brace in prose", () => {
    expect(containsJsonValue(`Note { this brace. Schema: ${reorderedPrettySchema}`, schema)).toBe(true);
  });

  it("finds a value whose strings contain braces and escaped quotes", () => {
    const value = { description: 'Use {id} and "}" literally', type: "string" };
    const text = `Schema:\n${JSON.stringify({ type: "string", description: value.description }, null, 2)}`;
    expect(containsJsonValue(text, value)).toBe(true);
  });

  it("finds a value written in the text with \\u escapes for non-ASCII characters", () => {
    const value = { description: "Größe", type: "string" };
    expect(containsJsonValue('Schema: { "type": "string", "description": "Gr\\u00f6\\u00dfe" }', value)).toBe(true);
  });

  it("does not find a value that differs by one value", () => {
    const text = reorderedPrettySchema.replace('"maximum": 1', '"maximum": 2');
    expect(containsJsonValue(text, schema)).toBe(false);
  });

  it("does not find a value when the text's object has an extra member", () => {
    const text = JSON.stringify({ ...schema, additionalProperties: false }, null, 2);
    expect(containsJsonValue(text, schema)).toBe(false);
  });

  it("does not find a value when the text's object lacks a member", () => {
    const { required: _required, ...lacking } = schema;
    expect(containsJsonValue(JSON.stringify(lacking, null, 2), schema)).toBe(false);
  });

  it("does not find a value whose array elements stand in another order", () => {
    const text = JSON.stringify({ ...schema, required: ["confidence", "answer"] }, null, 2);
    expect(containsJsonValue(text, schema)).toBe(false);
  });

  it("does not find a value in a text shorter than its compact JSON", () => {
    expect(containsJsonValue("{}", schema)).toBe(false);
  });

  it("does not find a value that the text only mentions inside a JSON string", () => {
    const text = JSON.stringify({ note: compactSchema });
    expect(containsJsonValue(text, schema)).toBe(false);
  });

  it("looks only for objects: an array value is never found", () => {
    expect(containsJsonValue('["a","b"]', ["a", "b"])).toBe(false);
  });

  it("looks only for objects: a boolean schema is never found", () => {
    expect(containsJsonValue("true", true)).toBe(false);
  });

  it("looks only for objects: undefined is never found", () => {
    expect(containsJsonValue("anything", undefined)).toBe(false);
  });

  // compact JSON of the value. An equal value can be written shorter than JSON.stringify
  // writes it (1e5 for 100000, 1e21 for 1e+21, a raw lone surrogate for its \udxxx escape),
  // so such a schema is counted twice although contract 3 says "counted once". The error is
  // on the safe side (over-counting). Suggested fix: drop the length filters or loosen them
  // to a safe lower bound (e.g. compare against the length of the value's canonical JSON
  // with numbers in their shortest form), or try `parsesTo` on every balanced span that
  // starts with `{"`.
  it("finds a value written with a shorter number spelling than JSON.stringify uses", () => {
    const value = { type: "string", maxLength: 100000 };
    expect(containsJsonValue('{"type":"string","maxLength":1e5}', value)).toBe(true);
  });
});

describe("schema de-duplication in measure", () => {
  it("counts a schema that also stands compactly in the system text once in the preflight", () => {
    const call = logicalCall({ system: [`Answer as ${compactSchema}`], responseSchema: schema });
    const size = measure(call, preflight);
    expect(size.schema_deduplicated).toBe(true);
    expect(size.schema_chars).toBe(0);
    expect(size.system_chars).toBe(10 + compactSchema.length);
    expect(size.total_chars).toBe(size.system_chars);
  });

  it("counts a schema pretty-printed with another key order in the system text once in the preflight", () => {
    const system = `Answer in this shape:\n${reorderedPrettySchema}`;
    const size = measure(logicalCall({ system: [system], responseSchema: schema }), preflight);
    expect(size.schema_deduplicated).toBe(true);
    expect(size.schema_chars).toBe(0);
    expect(size.total_chars).toBe(system.length);
  });

  it("finds the schema in any one of several system texts", () => {
    const call = logicalCall({ system: ["Be exact.", reorderedPrettySchema], responseSchema: schema });
    expect(measure(call, preflight).schema_deduplicated).toBe(true);
  });

  it("counts a schema that differs by one value from the system text's in full", () => {
    const system = reorderedPrettySchema.replace('"minimum": 0', '"minimum": -1');
    const size = measure(logicalCall({ system: [system], responseSchema: schema }), preflight);
    expect(size.schema_deduplicated).toBe(false);
    expect(size.schema_chars).toBe(compactSchema.length);
    expect(size.total_chars).toBe(system.length + compactSchema.length);
  });

  it("does not deduplicate a schema that stands only in a user message", () => {
    const size = measure(logicalCall({ messages: [compactSchema], responseSchema: schema }), preflight);
    expect(size.schema_deduplicated).toBe(false);
    expect(size.schema_chars).toBe(compactSchema.length);
  });

  it("never deduplicates on the provider check, which measures the representation actually sent", () => {
    const size = measure(logicalCall({ system: [compactSchema], responseSchema: schema }), provider);
    expect(size.schema_deduplicated).toBe(false);
    expect(size.schema_chars).toBe(compactSchema.length);
    expect(size.total_chars).toBe(2 * compactSchema.length);
  });

  it("deduplicates a Chat Completions response_format schema repeated in the system message", () => {
    const call = parseChatCompletion({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: `Reply with JSON matching:\n${reorderedPrettySchema}` },
        { role: "user", content: "Go." },
      ],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema } },
    });
    const size = measure(call, preflight);
    expect(size.schema_deduplicated).toBe(true);
    // Only the schema's name is left: it does not stand in the system text.
    expect(size.schema_chars).toBe("answer".length);
    expect(size.message_chars).toBe(3);
  });

  it("deduplicates a Responses text.format schema repeated in the instructions", () => {
    const call = parseResponseCreate({
      instructions: `Reply with JSON matching ${reorderedPrettySchema}`,
      input: "Go.",
      text: { format: { type: "json_schema", name: "answer", schema } },
    });
    expect(measure(call, preflight).schema_deduplicated).toBe(true);
  });

  it("deduplicates a Gemini responseJsonSchema repeated in the systemInstruction", () => {
    const call = parseGenerateContent(
      {
        system_instruction: { parts: [{ text: "Be exact." }, { text: reorderedPrettySchema }] },
        contents: [{ role: "user", parts: [{ text: "Go." }] }],
        generationConfig: { responseJsonSchema: schema },
      },
      "gemini-2.5-flash",
      false,
    );
    expect(measure(call, preflight).schema_deduplicated).toBe(true);
  });

  it("deduplicates an Anthropic output_config schema repeated in the system blocks", () => {
    const call = parseMessages({
      system: [{ type: "text", text: `Schema:\n${reorderedPrettySchema}` }],
      messages: [{ role: "user", content: "Go." }],
      output_config: { format: { type: "json_schema", schema } },
    });
    expect(measure(call, preflight).schema_deduplicated).toBe(true);
  });

  it("does not deduplicate a Gemini schema that only a user message repeats", () => {
    const call = parseGenerateContent(
      {
        contents: [{ role: "user", parts: [{ text: compactSchema }] }],
        generationConfig: { responseJsonSchema: schema },
      },
      "gemini-2.5-flash",
      false,
    );
    expect(measure(call, preflight).schema_deduplicated).toBe(false);
  });
});
