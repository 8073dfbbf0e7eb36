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
import { isObject, type Json, type JsonObject, openaiChatRules, type Path } from "./oracle.js";

const textPart = fc.record({ type: fc.constant("text"), text: smallText });

const imagePart = fc
  .record({
    url: fc.oneof(
      cross,
      fc.tuple(imageMediaType, binaryBase64).map(([type, data]) => `data:${type};base64,${data}`),
      fc.constant("https://example.com/picture.png"),
    ),
    detail: optional(fc.constantFrom("auto", "low", "high")),
    withNull: fc.boolean(),
  })
  .map(({ url, detail, withNull }) => {
    const part: JsonObject = { type: "image_url", image_url: compact({ url, detail }) };
    // A null member beside the media member: absent.
    if (withNull) part.file = null;
    return part;
  });

const audioPart = fc
  .record({ data: binaryBase64, format: fc.constantFrom("wav", "mp3") })
  .map((input_audio) => ({ type: "input_audio", input_audio }));

/** A file part: a PDF, or a text-like file as a data URL or raw base64 named by its extension. */
const filePart = fc
  .record({
    kind: fc.constantFrom("pdf", "text-url", "text-raw"),
    bytes: binaryBase64,
    text: smallText,
    name: smallName,
    textType: textMediaType,
  })
  .map(({ kind, bytes, text, name, textType }): JsonObject => {
    if (kind === "pdf")
      return { type: "file", file: { filename: `${name}.pdf`, file_data: `data:application/pdf;base64,${bytes}` } };
    if (kind === "text-url")
      return {
        type: "file",
        file: { filename: `${name}.txt`, file_data: `data:${textType ?? "text/plain"};base64,${base64Of(text)}` },
      };
    return { type: "file", file: { filename: `${name}.md`, file_data: base64Of(text) } };
  });

/** A stored file by id: content the gateway cannot measure (refused under the oracle's policy). */
const storedFilePart = smallName.map((name) => ({ type: "file", file: { file_id: `file-${name}` } }));

const userMessage = fc.record(
  {
    role: fc.constant("user"),
    content: fc.oneof(
      cross,
      smallText,
      fc.array(fc.oneof(cross, { weight: 6, arbitrary: textPart }, imagePart, audioPart, filePart, storedFilePart), {
        minLength: 1,
        maxLength: 3,
      }),
    ),
    name: smallName,
  },
  { requiredKeys: ["role", "content"] },
);

const systemMessage = fc.record(
  {
    role: fc.constantFrom("system", "developer"),
    content: fc.oneof(cross, smallText, fc.array(textPart, { minLength: 1, maxLength: 2 })),
    name: smallName,
  },
  { requiredKeys: ["role", "content"] },
);

const toolCall = fc.record({
  id: smallName.map((name) => `call_${name}`),
  type: fc.constant("function"),
  function: fc.record({
    name: smallName,
    arguments: fc.dictionary(smallName, smallText, { maxKeys: 2 }).map((args) => JSON.stringify(args)),
  }),
});

const assistantMessage = fc
  .record({
    content: fc.oneof(
      cross,
      smallText,
      fc.constant(null),
      fc.array(fc.oneof(cross, textPart, fc.record({ type: fc.constant("refusal"), refusal: smallText })), {
        minLength: 1,
        maxLength: 2,
      }),
    ),
    refusal: optional(smallText, true),
    name: optional(smallName),
    tool_calls: optional(fc.array(toolCall, { minLength: 1, maxLength: 2 })),
  })
  .map(({ content, refusal, name, tool_calls }) => compact({ role: "assistant", content, refusal, name, tool_calls }));

const toolMessage = fc.record({
  role: fc.constant("tool"),
  tool_call_id: smallName.map((name) => `call_${name}`),
  content: fc.oneof(cross, smallText, fc.array(textPart, { minLength: 1, maxLength: 2 })),
});

const functionTool = fc
  .record({
    name: smallName,
    description: optional(smallText),
    parameters: jsonSchemaArb,
    strict: optional(fc.boolean()),
  })
  .map((fn) => ({ type: "function", function: compact(fn) }));

const responseFormat = fc.oneof(
  cross,
  fc
    .record({
      name: smallName,
      description: optional(smallText),
      schema: jsonSchemaArb,
      strict: optional(fc.boolean()),
    })
    .map((format) => ({ type: "json_schema", json_schema: compact(format) })),
  fc.constant({ type: "json_object" }),
  fc.constant({ type: "text" }),
);

export const openaiChatBody: fc.Arbitrary<JsonObject> = fc
  .record({
    system: optional(systemMessage),
    messages: fc.array(
      fc.oneof(cross, { weight: 3, arbitrary: userMessage }, assistantMessage, toolMessage, systemMessage),
      {
        minLength: 1,
        maxLength: 4,
      },
    ),
    tools: optional(fc.array(functionTool, { minLength: 1, maxLength: 2 })),
    tool_choice: optional(
      fc.oneof(
        cross,
        fc.constantFrom("none", "auto", "required"),
        smallName.map((name) => ({ type: "function", function: { name } })),
      ),
    ),
    response_format: optional(responseFormat),
    prediction: optional(smallText.map((content) => ({ type: "content", content }))),
    temperature: optional(fc.double({ min: 0, max: 2, noNaN: true }), true),
    top_p: optional(fc.constant(0.9)),
    max_tokens: optional(fc.integer({ min: 1, max: 4096 })),
    max_completion_tokens: optional(fc.integer({ min: 1, max: 4096 }), true),
    stream: optional(fc.boolean()),
    metadata: optional(fc.dictionary(smallName, smallText, { maxKeys: 2 })),
    user: optional(smallText),
    seed: optional(fc.integer(), true),
    stop: optional(fc.oneof(cross, smallText, fc.array(smallText, { maxLength: 2 }))),
    n: optional(fc.constant(1)),
    store: optional(fc.boolean()),
    parallel_tool_calls: optional(fc.boolean()),
    reasoning_effort: optional(fc.constantFrom("low", "medium", "high")),
    service_tier: optional(fc.constantFrom("auto", "default")),
    logit_bias: optional(fc.constant({ "50256": -100 })),
    presence_penalty: optional(fc.constant(0.5)),
    web_search_options: optional(fc.constant({ search_context_size: "low" })),
  })
  .map(({ system, messages, stream, ...rest }) =>
    compact({
      model: "gpt-4o-mini",
      messages: system ? [system, ...messages] : messages,
      stream,
      stream_options: stream ? { include_usage: true } : undefined,
      ...rest,
    }),
  );

function isChatPartArray(path: Path): boolean {
  return path.length === 3 && path[0] === "messages" && path[2] === "content";
}

export const openaiChatSpec: SurfaceSpec = {
  name: "openai-chat",
  rules: openaiChatRules,
  body: openaiChatBody,
  isPartArray: (path) => isChatPartArray(path) || (path.length === 1 && path[0] === "messages"),
  unknownPart(s, variant): Json {
    const forms: Json[] = [
      { type: "oracle_part", text: s },
      { type: "input_text", text: s },
      { type: "oracle_part", oracle_part: { data: s } },
      { role: "user", content: s, type: "oracle_item" },
    ];
    return forms[variant % forms.length]!;
  },
  isMediaObject(path, object) {
    const part = typeof path[path.length - 1] === "number" && path[path.length - 2] === "content";
    if (part && ("image_url" in object || "input_audio" in object || "file" in object)) return true;
    const last = path[path.length - 1];
    return last === "image_url" || last === "input_audio" || last === "file";
  },
  addTextMedia(body, s, variant) {
    const text = base64Of(s);
    const forms: JsonObject[] = [
      { type: "file", file: { filename: "notes.txt", file_data: `data:text/plain;base64,${text}` } },
      { type: "file", file: { filename: "notes.md", file_data: text } },
      { type: "file", file: { filename: "data.json", file_data: `data:application/json;base64,${text}` } },
      { type: "file", file: { filename: "table.csv", file_data: text } },
      // A data URL's own type, whatever the file name says.
      { type: "file", file: { filename: "report.pdf", file_data: `data:text/plain;base64,${text}` } },
      // Raw base64 without a file name: no type, so text-like.
      { type: "file", file: { file_data: text } },
    ];
    const part = forms[variant % forms.length]!;
    const messages = body.messages as Json[];
    const target = messages.findIndex(
      (message) => isObject(message) && message.role === "user" && Array.isArray(message.content),
    );
    if (target >= 0 && variant % 2 === 0) {
      const content = (messages[target] as JsonObject).content as Json[];
      content.push(part);
      return ["messages", target, "content", content.length - 1];
    }
    messages.push({ role: "user", content: [part] });
    return ["messages", messages.length - 1, "content", 0];
  },
};
