import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/json/json-object.js";
import { parseMessages } from "../../src/surfaces/anthropic/messages-body.js";
import { measure, noCachedPrefix } from "../../src/window/prompt-size.js";
import { boundedPolicy, boundedRef } from "../window/fixtures.js";
import { expectInvalidRequest, fromJsonText, wire } from "./gateway-error-of.js";

const preflight = { check: "preflight", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;
const schema = { type: "object", properties: { answer: { type: "string" } } };

function messages(body: MessageCreateParamsNonStreaming) {
  return parseMessages(wire(body));
}

function userBlocks(...content: unknown[]): JsonObject {
  return { messages: [{ role: "user", content }] };
}

describe("parseMessages", () => {
  it("reads the model and the stream flag", () => {
    const call = parseMessages({ model: "claude-sonnet-4-5", stream: true, messages: [] });
    expect(call.model).toBe("claude-sonnet-4-5");
    expect(call.stream).toBe(true);
  });

  it("takes a system string as system text", () => {
    const call = messages({ model: "m", max_tokens: 10, system: "Be exact.", messages: [] });
    expect(call.system).toEqual(["Be exact."]);
  });

  it("takes system text blocks as system text", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      system: [
        { type: "text", text: "Be exact.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Cite ids." },
      ],
      messages: [],
    });
    expect(call.system).toEqual(["Be exact.", "Cite ids."]);
  });

  it("takes a message's string content as message text", () => {
    const call = messages({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "Hello" }] });
    expect(call.messages).toEqual(["Hello"]);
    expect(call.system).toEqual([]);
  });

  it("takes text and thinking blocks as message text", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Let me see.", signature: "c2lnbmF0dXJl" },
            { type: "text", text: "Done." },
          ],
        },
      ],
    });
    expect(call.messages).toEqual(["Let me see.", "Done."]);
  });

  it("does not count a redacted_thinking block", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "assistant", content: [{ type: "redacted_thinking", data: "ZW5jcnlwdGVk" }] }],
    });
    expect(call.messages).toEqual([]);
  });

  it("takes a tool_use block as its name and its input as compact JSON", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { id: 7 } }] },
      ],
    });
    expect(call.messages).toEqual(["lookup", '{"id":7}']);
  });

  it("takes a server_tool_use block like a tool_use block", () => {
    const call = parseMessages({
      messages: [
        {
          role: "assistant",
          content: [{ type: "server_tool_use", id: "s", name: "web_search", input: { query: "q" } }],
        },
      ],
    });
    expect(call.messages).toEqual(["web_search", '{"query":"q"}']);
  });

  it("takes a tool_result block's string content as message text", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }] }],
    });
    expect(call.messages).toEqual(["found"]);
  });

  it("takes a tool_result block's content blocks as text and media", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [
                { type: "text", text: "chart:" },
                { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
              ],
            },
          ],
        },
      ],
    });
    expect(call.messages).toEqual(["chart:"]);
    expect(call.mediaParts).toBe(1);
  });

  it("counts nothing for a tool_result without content", () => {
    const call = parseMessages(userBlocks({ type: "tool_result", tool_use_id: "toolu_1" }));
    expect(call.messages).toEqual([]);
  });

  it("counts image blocks and base64 or URL documents as media parts, not as text", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Read" },
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } },
            { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
          ],
        },
      ],
    });
    expect(call.mediaParts).toBe(3);
    expect(call.messages).toEqual(["Read"]);
  });

  it("notes a container_upload block as content the gateway cannot measure", () => {
    const call = parseMessages(userBlocks({ type: "container_upload", file_id: "file_1" }));
    expect(call.mediaParts).toBe(0);
    expect(call.unmeasured.map((content) => content.path)).toEqual(["messages[0].content[0].file_id"]);
  });

  it("takes a plain-text document's data, title and context as text", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [
        {
          role: "user",
          content: [
            {
              type: "document",
              source: { type: "text", media_type: "text/plain", data: "The memo." },
              title: "Memo",
              context: "From the file.",
            },
          ],
        },
      ],
    });
    expect(call.messages).toEqual(["The memo.", "Memo", "From the file."]);
    expect(call.mediaParts).toBe(0);
  });

  it("takes a content document's string content as text", () => {
    const call = parseMessages(userBlocks({ type: "document", source: { type: "content", content: "Inline doc" } }));
    expect(call.messages).toEqual(["Inline doc"]);
  });

  it("takes a content document's blocks as text and media", () => {
    const call = parseMessages(
      userBlocks({
        type: "document",
        source: {
          type: "content",
          content: [
            { type: "text", text: "Page 1" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } },
          ],
        },
      }),
    );
    expect(call.messages).toEqual(["Page 1"]);
    expect(call.mediaParts).toBe(1);
  });

  it("takes a search result's source, title and text blocks as message text", () => {
    const block = {
      type: "search_result",
      source: "https://example.com",
      title: "T",
      content: [{ type: "text", text: "x" }],
    };
    expect(parseMessages(userBlocks(block)).messages).toEqual(["https://example.com", "T", "x"]);
  });

  it("counts a server tool result replayed from an earlier turn as its whole compact JSON", () => {
    const block = { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] };
    expect(parseMessages(userBlocks(block)).messages).toEqual([JSON.stringify(block)]);
  });

  it("counts a block of an unknown type as an unknown field, its whole compact JSON", () => {
    const block = { type: "future_block", value: 1 };
    const call = parseMessages(userBlocks(block));
    expect(call.messages).toEqual([]);
    expect(call.other).toEqual([
      { path: "messages[0].content[0]", chars: JSON.stringify(block).length, unknown: true },
    ]);
  });

  it("collects the tools as tool declarations", () => {
    const tool = { name: "lookup", input_schema: { type: "object" } };
    expect(parseMessages({ messages: [], tools: [tool] }).tools).toEqual([tool]);
  });

  it("takes output_config.format.schema of a json_schema format as the response schema", () => {
    const call = messages({
      model: "m",
      max_tokens: 10,
      messages: [],
      output_config: { format: { type: "json_schema", schema } },
    });
    expect(call.responseSchema).toEqual(schema);
  });

  it("takes the beta output_format.schema as the response schema", () => {
    const call = parseMessages({ messages: [], output_format: { type: "json_schema", schema } });
    expect(call.responseSchema).toEqual(schema);
  });

  it("has no response schema without an output format", () => {
    const call = parseMessages({ messages: [], output_config: { effort: "low" } });
    expect(call.responseSchema).toBeUndefined();
  });

  it("records no cached prefix", () => {
    expect(parseMessages({ messages: [] }).cachedPrefix).toBeUndefined();
  });
});

describe("parseMessages refusing wrong field types", () => {
  const secret = "SECRET-PROMPT-TEXT";
  const cases: { what: string; param: string; body: JsonObject }[] = [
    { what: "missing messages", param: "messages", body: { model: "m" } },
    { what: "messages that are a string", param: "messages", body: { messages: secret } },
    {
      what: "a message that is a string",
      param: "messages[1]",
      body: { messages: [{ role: "user", content: "a" }, secret] },
    },
    { what: "a message without a role", param: "messages[0].role", body: { messages: [{ content: secret }] } },
    {
      what: "content that is an object",
      param: "messages[0].content",
      body: { messages: [{ role: "user", content: { text: secret } }] },
    },
    { what: "missing content", param: "messages[0].content", body: { messages: [{ role: "user" }] } },
    { what: "a content block that is a string", param: "messages[0].content[0]", body: userBlocks(secret) },
    {
      what: "a content block without a type",
      param: "messages[0].content[0].type",
      body: userBlocks({ text: secret }),
    },
    {
      what: "a text block whose text is not a string",
      param: "messages[0].content[0].text",
      body: userBlocks({ type: "text", text: [secret] }),
    },
    {
      what: "a thinking block whose thinking is not a string",
      param: "messages[0].content[0].thinking",
      body: userBlocks({ type: "thinking", thinking: 4711 }),
    },
    {
      what: "a tool_use block without a name",
      param: "messages[0].content[0].name",
      body: userBlocks({ type: "tool_use", id: "t", input: { q: secret } }),
    },
    {
      what: "a tool_result whose content is a number",
      param: "messages[0].content[0].content",
      body: userBlocks({ type: "tool_result", tool_use_id: "t", content: 4711 }),
    },
    {
      what: "a tool_result content block whose text is not a string",
      param: "messages[0].content[0].content[0].text",
      body: userBlocks({ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: 4711 }] }),
    },
    {
      what: "a text document whose data is not a string",
      param: "messages[0].content[0].source.data",
      body: userBlocks({ type: "document", source: { type: "text", data: [secret] } }),
    },
    {
      what: "a content document whose content is a number",
      param: "messages[0].content[0].source.content",
      body: userBlocks({ type: "document", source: { type: "content", content: 4711 } }),
    },
    {
      what: "a document title that is not a string",
      param: "messages[0].content[0].title",
      body: userBlocks({ type: "document", source: { type: "text", data: "d" }, title: [secret] }),
    },
    { what: "a system that is a number", param: "system", body: { system: 4711, messages: [] } },
    { what: "a system that is an object", param: "system", body: { system: { text: secret }, messages: [] } },
    {
      what: "a system block whose text is not a string",
      param: "system[1].text",
      body: {
        system: [
          { type: "text", text: "a" },
          { type: "text", text: 4711 },
        ],
        messages: [],
      },
    },
    { what: "tools that are a string", param: "tools", body: { messages: [], tools: secret } },
    {
      what: "an output_config that is a string",
      param: "output_config",
      body: { messages: [], output_config: secret },
    },
    {
      what: "an output_config.format that is a string",
      param: "output_config.format",
      body: { messages: [], output_config: { format: secret } },
    },
    {
      what: "an output_config.format.schema that is a string",
      param: "output_config.format.schema",
      body: { messages: [], output_config: { format: { type: "json_schema", schema: secret } } },
    },
    {
      what: "an output_format that is a string",
      param: "output_format",
      body: { messages: [], output_format: secret },
    },
    { what: "a model that is a number", param: "model", body: { model: 4711, messages: [] } },
    { what: "a stream flag that is a string", param: "stream", body: { stream: secret, messages: [] } },
  ];

  for (const { what, param, body } of cases) {
    it(`refuses ${what} as INVALID_REQUEST naming ${param}, without the value`, () => {
      expectInvalidRequest(() => parseMessages(body), param, [secret, "4711"]);
    });
  }

  // `output_config.format.schema`, also when the format came from the beta `output_format`
  // member, so the param points at a field the client did not send. Suggested fix: remember
  // which member the format came from and use `output_format.schema` for the beta member.
  it("refuses an output_format.schema that is a string, naming output_format.schema", () => {
    const body = { messages: [], output_format: { type: "json_schema", schema: secret } };
    expectInvalidRequest(() => parseMessages(body), "output_format.schema", [secret]);
  });
});

describe("measuring a Messages body", () => {
  const bodyText = String.raw`{
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "temperature": 0.5,
    "top_k": 5,
    "stop_sequences": ["END"],
    "metadata": { "user_id": "u-1" },
    "system": [{ "type": "text", "text": "Rules: be exact." }],
    "messages": [
      { "role": "user", "content": [
        { "type": "text", "text": "Line1\nLine2 \u00fc" },
        { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" } },
        { "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": "JVBERi0=" } },
        { "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": "Memo \ud83d\ude00" }, "title": "T1" }
      ] },
      { "role": "assistant", "content": [{ "type": "tool_use", "id": "toolu_1", "name": "lookup", "input": { "id" : 7 } }] },
      { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "toolu_1", "content": [{ "type": "text", "text": "found" }] }] }
    ],
    "tools": [{ "name": "lookup", "description": "Finds a record.",
      "input_schema": { "type": "object", "properties": { "id": { "type": "integer" } } } }],
    "output_config": { "format": { "type": "json_schema",
      "schema": { "type": "object", "properties": { "antwort": { "type": "string", "description": "\u00c4\u00d6\u00dc" } } } } }
  }`;
  const compactTool =
    '{"name":"lookup","description":"Finds a record.","input_schema":{"type":"object","properties":{"id":{"type":"integer"}}}}';
  const compactSchema = '{"type":"object","properties":{"antwort":{"type":"string","description":"ÄÖÜ"}}}';
  const size = measure(parseMessages(fromJsonText(bodyText)), preflight);

  it("counts the system blocks as system_chars", () => {
    expect(size.system_chars).toBe(16);
  });

  it("counts text, text documents, tool uses and tool results as message_chars", () => {
    // "Line1\nLine2 ü" (13) + "Memo 😀" (6) + "T1" (2) + "lookup" (6) + '{"id":7}' (8) + "found" (5)
    expect(size.message_chars).toBe(13 + 6 + 2 + 6 + 8 + 5);
  });

  it("counts the tools as compact JSON", () => {
    expect(size.tool_chars).toBe(compactTool.length);
  });

  it("counts output_config.format.schema as compact JSON", () => {
    expect(size.schema_chars).toBe(compactSchema.length);
  });

  it("counts the image and the PDF document as media_parts", () => {
    expect(size.media_parts).toBe(2);
  });

  it("counts the tool use ids as other_chars", () => {
    expect(size.other_chars).toBe('"id":"toolu_1"'.length + '"tool_use_id":"toolu_1"'.length);
  });

  it("adds the categories into the totals and reports the policy", () => {
    const total = 16 + 40 + compactTool.length + compactSchema.length + size.other_chars;
    expect(size.total_chars).toBe(total);
    expect(size.conservative_total_chars).toBe(total + 1500);
    expect(size.policy).toBe(boundedRef);
  });

  it("measures the same body written compactly exactly alike", () => {
    expect(measure(parseMessages(fromJsonText(JSON.stringify(JSON.parse(bodyText)))), preflight)).toEqual(size);
  });

  it("does not count the model, max_tokens, temperature, top_k, stop_sequences or metadata", () => {
    const {
      model: _m,
      max_tokens: _x,
      temperature: _t,
      top_k: _k,
      stop_sequences: _s,
      metadata: _d,
      ...bare
    } = fromJsonText(bodyText);
    expect(measure(parseMessages(bare), preflight)).toEqual(size);
  });

  it("counts a system string exactly like one system text block", () => {
    const body = fromJsonText(bodyText);
    const asString = { ...body, system: "Rules: be exact." };
    expect(measure(parseMessages(asString), preflight)).toEqual(size);
  });

  it("counts the characters that JSON escapes in a message string stand for", () => {
    const call = parseMessages(
      fromJsonText(String.raw`{"messages":[{"role":"user","content":"\u00e9\r\n\ud83d\ude00\ud83d"}]}`),
    );
    expect(measure(call, preflight).message_chars).toBe(5);
  });
});

describe("measuring Anthropic cache breakpoints", () => {
  const tool = { name: "lookup", input_schema: { type: "object" }, cache_control: { type: "ephemeral" } };
  const toolChars = JSON.stringify(tool).length;

  it("reports the tools and system up to a system breakpoint as cache_prefix_chars, counted once", () => {
    const call = parseMessages({
      system: [
        { type: "text", text: "Cached rules.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Fresh." },
      ],
      tools: [{ name: "lookup", input_schema: { type: "object" } }],
      messages: [{ role: "user", content: "Hello" }],
    });
    const size = measure(call, preflight);
    const tools = JSON.stringify({ name: "lookup", input_schema: { type: "object" } }).length;
    expect(size).toMatchObject({ cache_prefix_chars: 13 + tools, system_chars: 6, tool_chars: 0, message_chars: 5 });
    expect(size.total_chars).toBe(13 + tools + 6 + 5);
  });

  it("reports everything up to the last marked message block as the cached prefix", () => {
    const call = parseMessages({
      system: "Rules.",
      tools: [tool],
      messages: [
        { role: "user", content: [{ type: "text", text: "Context.", cache_control: { type: "ephemeral" } }] },
        { role: "assistant", content: "Ok." },
        { role: "user", content: "Question?" },
      ],
    });
    const size = measure(call, preflight);
    expect(size).toMatchObject({ cache_prefix_chars: toolChars + 6 + 8, system_chars: 0, message_chars: 3 + 9 });
    expect(size.total_chars).toBe(toolChars + 6 + 8 + 3 + 9);
  });

  it("reports only the tools up to a tool breakpoint as the cached prefix", () => {
    const call = parseMessages({ system: "Rules.", tools: [tool], messages: [{ role: "user", content: "Hi" }] });
    expect(measure(call, preflight)).toMatchObject({ cache_prefix_chars: toolChars, tool_chars: 0, system_chars: 6 });
  });

  it("treats a top-level cache_control as a breakpoint on the last block", () => {
    const call = parseMessages({
      cache_control: { type: "ephemeral" },
      system: "Rules.",
      messages: [{ role: "user", content: "Hi there" }],
    });
    expect(measure(call, preflight)).toMatchObject({ cache_prefix_chars: 6 + 8, system_chars: 0, message_chars: 0 });
  });

  it("reports no cached prefix without a breakpoint", () => {
    const call = parseMessages({ system: "Rules.", messages: [{ role: "user", content: "Hi" }] });
    expect(call.inlinePrefix).toBeUndefined();
    expect(measure(call, preflight).cache_prefix_chars).toBe(0);
  });
});
