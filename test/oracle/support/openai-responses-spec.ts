import fc from "fast-check";
import {
  base64Of,
  binaryBase64,
  compact,
  cross,
  imageMediaType,
  jsonSchemaArb,
  optional,
  smallName,
  smallText,
  textMediaType,
} from "./gen.js";
import type { SurfaceSpec } from "./insert.js";
import { isObject, type Json, type JsonObject, openaiResponsesRules, type Path } from "./oracle.js";

const inputText = fc.record({ type: fc.constant("input_text"), text: smallText });

const inputImage = fc
  .record({
    image_url: fc.oneof(
      cross,
      fc.tuple(imageMediaType, binaryBase64).map(([type, data]) => `data:${type};base64,${data}`),
      fc.constant("https://example.com/picture.png"),
    ),
    detail: optional(fc.constantFrom("auto", "low", "high")),
    file_id: optional(fc.constant(null)),
  })
  .map((part) => compact({ type: "input_image", ...part }));

const inputFile = fc
  .record({
    kind: fc.constantFrom("pdf", "text-url", "text-raw"),
    bytes: binaryBase64,
    text: smallText,
    name: smallName,
    textType: textMediaType,
  })
  .map(({ kind, bytes, text, name, textType }): JsonObject => {
    if (kind === "pdf")
      return { type: "input_file", filename: `${name}.pdf`, file_data: `data:application/pdf;base64,${bytes}` };
    if (kind === "text-url")
      return {
        type: "input_file",
        filename: `${name}.txt`,
        file_data: `data:${textType ?? "text/plain"};base64,${base64Of(text)}`,
      };
    return { type: "input_file", filename: `${name}.csv`, file_data: base64Of(text) };
  });

const easyMessage = fc.record(
  {
    role: fc.constantFrom("user", "system", "developer", "assistant"),
    content: smallText,
    type: fc.constant("message"),
  },
  { requiredKeys: ["role", "content"] },
);

const userMessage = fc.record(
  {
    type: fc.constant("message"),
    role: fc.constant("user"),
    content: fc.array(fc.oneof(cross, { weight: 3, arbitrary: inputText }, inputImage, inputFile), {
      minLength: 1,
      maxLength: 3,
    }),
  },
  { requiredKeys: ["role", "content"] },
);

const outputMessage = fc.record({
  type: fc.constant("message"),
  id: smallName.map((name) => `msg_${name}`),
  role: fc.constant("assistant"),
  status: fc.constant("completed"),
  content: fc.array(
    fc.oneof(
      cross,
      fc.record({ type: fc.constant("output_text"), text: smallText, annotations: fc.constant([]) }),
      fc.record({ type: fc.constant("refusal"), refusal: smallText }),
    ),
    { minLength: 1, maxLength: 2 },
  ),
});

const functionCall = fc.record(
  {
    type: fc.constant("function_call"),
    id: smallName.map((name) => `fc_${name}`),
    call_id: smallName.map((name) => `call_${name}`),
    name: smallName,
    arguments: fc.dictionary(smallName, smallText, { maxKeys: 2 }).map((args) => JSON.stringify(args)),
    status: fc.constant("completed"),
  },
  { requiredKeys: ["type", "call_id", "name", "arguments"] },
);

const functionCallOutput = fc.record({
  type: fc.constant("function_call_output"),
  call_id: smallName.map((name) => `call_${name}`),
  output: fc.oneof(cross, smallText, fc.array(inputText, { minLength: 1, maxLength: 2 })),
});

const reasoningItem = fc.record(
  {
    type: fc.constant("reasoning"),
    id: smallName.map((name) => `rs_${name}`),
    summary: fc.array(fc.record({ type: fc.constant("summary_text"), text: smallText }), { maxLength: 2 }),
    encrypted_content: smallText,
  },
  { requiredKeys: ["type", "id", "summary"] },
);

const webSearchCall = fc.record({
  type: fc.constant("web_search_call"),
  id: smallName.map((name) => `ws_${name}`),
  status: fc.constant("completed"),
  action: fc.record({ type: fc.constant("search"), query: smallText }),
});

const functionTool = fc
  .record({
    name: smallName,
    description: optional(smallText),
    parameters: jsonSchemaArb,
    strict: optional(fc.boolean()),
  })
  .map((tool) => compact({ type: "function", ...tool }));

const textConfig = fc
  .record({
    format: optional(
      fc.oneof(
        cross,
        fc
          .record({
            name: smallName,
            description: optional(smallText),
            schema: jsonSchemaArb,
            strict: optional(fc.boolean()),
          })
          .map((format) => compact({ type: "json_schema", ...format })),
        fc.constant({ type: "text" }),
        fc.constant({ type: "json_object" }),
      ),
    ),
    verbosity: optional(fc.constantFrom("low", "medium", "high")),
  })
  .map((text) => compact(text));

export const openaiResponsesBody: fc.Arbitrary<JsonObject> = fc
  .record({
    input: fc.oneof(
      cross,
      smallText,
      fc.array(
        fc.oneof(
          cross,
          { weight: 3, arbitrary: easyMessage },
          { weight: 3, arbitrary: userMessage },
          outputMessage,
          functionCall,
          functionCallOutput,
          reasoningItem,
          webSearchCall,
          // An item reference: content the gateway cannot measure.
          smallName.map((name) => ({ type: "item_reference", id: `msg_${name}` })),
        ),
        { minLength: 1, maxLength: 4 },
      ),
    ),
    instructions: optional(smallText, true),
    tools: optional(fc.array(functionTool, { minLength: 1, maxLength: 2 })),
    tool_choice: optional(
      fc.oneof(
        cross,
        fc.constantFrom("none", "auto", "required"),
        smallName.map((name) => ({ type: "function", name })),
      ),
    ),
    text: optional(textConfig),
    reasoning: optional(
      fc.record({ effort: fc.constantFrom("low", "medium", "high"), summary: fc.constantFrom("auto", "concise") }),
    ),
    previous_response_id: optional(fc.constant(null)),
    conversation: optional(fc.constant(null)),
    prompt: optional(fc.constant(null)),
    temperature: optional(fc.double({ min: 0, max: 2, noNaN: true }), true),
    top_p: optional(fc.constant(1)),
    max_output_tokens: optional(fc.integer({ min: 16, max: 4096 }), true),
    store: optional(fc.boolean()),
    stream: optional(fc.boolean()),
    metadata: optional(fc.dictionary(smallName, smallText, { maxKeys: 2 })),
    user: optional(smallText),
    truncation: optional(fc.constantFrom("auto", "disabled")),
    include: optional(fc.constant(["reasoning.encrypted_content"])),
    parallel_tool_calls: optional(fc.boolean()),
    service_tier: optional(fc.constantFrom("auto", "default", "flex")),
    safety_identifier: optional(smallText),
    prompt_cache_key: optional(smallText),
  })
  .map((body) => compact({ model: "gpt-4o-mini", ...body }));

function isContentArray(path: Path): boolean {
  return path.length === 3 && path[0] === "input" && path[2] === "content";
}

export const openaiResponsesSpec: SurfaceSpec = {
  name: "openai-responses",
  rules: openaiResponsesRules,
  body: openaiResponsesBody,
  isPartArray: (path) => isContentArray(path) || (path.length === 1 && path[0] === "input"),
  unknownPart(s, variant): Json {
    const forms: Json[] = [
      { type: "oracle_item", text: s },
      { type: "input_oracle", oracle: { data: s } },
      { type: "oracle_item", role: "user", content: s },
      { type: "text", text: s },
    ];
    return forms[variant % forms.length]!;
  },
  isMediaObject(path, object) {
    const part = typeof path[path.length - 1] === "number" && path[path.length - 2] === "content";
    return part && (object.type === "input_image" || object.type === "input_file");
  },
  addTextMedia(body, s, variant) {
    const text = base64Of(s);
    const forms: JsonObject[] = [
      { type: "input_file", filename: "notes.txt", file_data: `data:text/plain;base64,${text}` },
      { type: "input_file", filename: "notes.md", file_data: text },
      { type: "input_file", filename: "data.json", file_data: `data:application/json;base64,${text}` },
      { type: "input_file", filename: "page.xml", file_data: text },
      { type: "input_file", filename: "report.pdf", file_data: `data:text/markdown;base64,${text}` },
      { type: "input_file", file_data: text },
    ];
    const part = forms[variant % forms.length]!;
    if (!Array.isArray(body.input)) body.input = [{ role: "user", content: body.input ?? "" }];
    const input = body.input as Json[];
    const target = input.findIndex((item) => isObject(item) && item.role === "user" && Array.isArray(item.content));
    if (target >= 0 && variant % 2 === 0) {
      const content = (input[target] as JsonObject).content as Json[];
      content.push(part);
      return ["input", target, "content", content.length - 1];
    }
    input.push({ role: "user", content: [part] });
    return ["input", input.length - 1, "content", 0];
  },
};
