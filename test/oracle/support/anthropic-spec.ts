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
} from "./gen.js";
import type { SurfaceSpec } from "./insert.js";
import { anthropicRules, isObject, type Json, type JsonObject } from "./oracle.js";

const cacheControl = optional(fc.constant({ type: "ephemeral" }));

const textBlock = fc
  .record({ text: smallText, cache_control: cacheControl })
  .map((block) => compact({ type: "text", ...block }));

const imageBlock = fc
  .record({
    source: fc.oneof(
      cross,
      fc.record({ type: fc.constant("base64"), media_type: imageMediaType, data: binaryBase64 }),
      fc.record({ type: fc.constant("url"), url: fc.constant("https://example.com/picture.png") }),
    ),
    cache_control: cacheControl,
  })
  .map((block) => compact({ type: "image", ...block }));

const documentBlock = fc
  .record({
    source: fc.oneof(
      cross,
      binaryBase64.map((data) => ({ type: "base64", media_type: "application/pdf", data })),
      smallText.map((data) => ({ type: "text", media_type: "text/plain", data })),
      smallText.map((text) => ({ type: "base64", media_type: "text/plain", data: base64Of(text) })),
      fc
        .array(fc.record({ type: fc.constant("text"), text: smallText }), { minLength: 1, maxLength: 2 })
        .map((content) => ({ type: "content", content })),
      // A file uploaded to Anthropic: content the gateway cannot measure.
      smallName.map((name) => ({ type: "file", file_id: `file_${name}` })),
    ),
    title: optional(smallText),
    context: optional(smallText),
    citations: optional(fc.record({ enabled: fc.boolean() })),
    cache_control: cacheControl,
  })
  .map((block) => compact({ type: "document", ...block }));

const toolResultBlock = fc
  .record({
    tool_use_id: smallName.map((name) => `toolu_${name}`),
    content: optional(
      fc.oneof(cross, smallText, fc.array(fc.oneof(cross, textBlock, imageBlock), { minLength: 1, maxLength: 2 })),
    ),
    is_error: optional(fc.boolean()),
    cache_control: cacheControl,
  })
  .map((block) => compact({ type: "tool_result", ...block }));

const searchResultBlock = fc
  .record({
    source: smallText,
    title: smallText,
    content: fc.array(fc.record({ type: fc.constant("text"), text: smallText }), { minLength: 1, maxLength: 2 }),
    citations: optional(fc.record({ enabled: fc.boolean() })),
  })
  .map((block) => compact({ type: "search_result", ...block }));

const toolUseBlock = fc
  .record({
    id: smallName.map((name) => `toolu_${name}`),
    name: smallName,
    input: fc.dictionary(smallName, smallText, { maxKeys: 2 }),
  })
  .map((block) => ({ type: "tool_use", ...block }));

const thinkingBlock = fc
  .record({ thinking: smallText, signature: binaryBase64 })
  .map((block) => ({ type: "thinking", ...block }));

const redactedThinkingBlock = binaryBase64.map((data) => ({ type: "redacted_thinking", data }));

const userMessage = fc.record({
  role: fc.constant("user"),
  content: fc.oneof(
    cross,
    smallText,
    fc.array(
      fc.oneof(
        cross,
        { weight: 3, arbitrary: textBlock },
        imageBlock,
        documentBlock,
        toolResultBlock,
        searchResultBlock,
      ),
      { minLength: 1, maxLength: 3 },
    ),
  ),
});

const assistantMessage = fc.record({
  role: fc.constant("assistant"),
  content: fc.oneof(
    cross,
    smallText,
    fc.array(fc.oneof(cross, { weight: 2, arbitrary: textBlock }, toolUseBlock, thinkingBlock, redactedThinkingBlock), {
      minLength: 1,
      maxLength: 2,
    }),
  ),
});

const tool = fc
  .record({
    name: smallName,
    description: optional(smallText),
    input_schema: jsonSchemaArb,
    cache_control: cacheControl,
  })
  .map((definition) => compact(definition));

export const anthropicBody: fc.Arbitrary<JsonObject> = fc
  .record({
    system: optional(fc.oneof(cross, smallText, fc.array(textBlock, { minLength: 1, maxLength: 2 }))),
    turns: fc.array(fc.tuple(userMessage, assistantMessage), { minLength: 1, maxLength: 2 }),
    endWithUser: fc.boolean(),
    tools: optional(fc.array(tool, { minLength: 1, maxLength: 2 })),
    tool_choice: optional(
      fc.oneof(
        cross,
        fc.record(
          { type: fc.constantFrom("auto", "any", "none"), disable_parallel_tool_use: fc.boolean() },
          { requiredKeys: ["type"] },
        ),
        smallName.map((name) => ({ type: "tool", name })),
      ),
    ),
    output_config: optional(
      fc
        .record(
          {
            format: jsonSchemaArb.map((schema) => ({ type: "json_schema", schema })),
            effort: fc.constantFrom("low", "high"),
          },
          {
            requiredKeys: ["format"],
          },
        )
        .map((config) => compact(config)),
    ),
    metadata: optional(fc.record({ user_id: smallText })),
    temperature: optional(fc.double({ min: 0, max: 1, noNaN: true })),
    top_k: optional(fc.constant(40)),
    top_p: optional(fc.constant(0.9)),
    stop_sequences: optional(fc.array(smallText, { maxLength: 2 })),
    stream: optional(fc.boolean()),
    thinking: optional(
      fc.oneof(cross, fc.constant({ type: "enabled", budget_tokens: 1024 }), fc.constant({ type: "disabled" })),
    ),
    service_tier: optional(fc.constantFrom("auto", "standard_only")),
    container: optional(fc.constant(null)),
  })
  .map(({ turns, endWithUser, ...rest }) => {
    const messages: Json[] = turns.flat();
    if (endWithUser) messages.push({ role: "user", content: "go on" });
    return compact({ model: "claude-sonnet-4-5", max_tokens: 1024, messages, ...rest });
  });

export const anthropicSpec: SurfaceSpec = {
  name: "anthropic",
  rules: anthropicRules,
  body: anthropicBody,
  isPartArray: (path) =>
    (path.length === 3 && path[0] === "messages" && path[2] === "content") ||
    (path.length === 1 && path[0] === "system") ||
    path[path.length - 1] === "content",
  unknownPart(s, variant): Json {
    const forms: Json[] = [
      { type: "oracle_block", text: s },
      { type: "oracle_block", oracle: { data: s } },
      { type: "input_text", text: s },
      { type: "text", text: "a", oracle_extra: s },
    ];
    return forms[variant % forms.length]!;
  },
  isMediaObject(path, object) {
    if (object.type === "image" || object.type === "document") return true;
    return path[path.length - 1] === "source" && isObject(object);
  },
  addTextMedia(body, s, variant) {
    const forms: JsonObject[] = [
      { type: "document", source: { type: "base64", media_type: "text/plain", data: base64Of(s) } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: s } },
      { type: "document", source: { type: "base64", media_type: "text/plain", data: base64Of(s) }, title: "t" },
    ];
    const block = forms[variant % forms.length]!;
    const messages = body.messages as JsonObject[];
    const target = messages.findIndex((message) => message.role === "user" && Array.isArray(message.content));
    if (target >= 0 && variant % 2 === 0) {
      const content = messages[target]!.content as Json[];
      content.push(block);
      return ["messages", target, "content", content.length - 1];
    }
    messages.push({ role: "user", content: [block] });
    return ["messages", messages.length - 1, "content", 0];
  },
};
