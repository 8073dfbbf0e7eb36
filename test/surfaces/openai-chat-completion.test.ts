import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/json/json-object.js";
import { parseChatCompletion } from "../../src/surfaces/openai/chat-completion-body.js";
import { measure, noCachedPrefix } from "../../src/window/prompt-size.js";
import { boundedPolicy, boundedRef } from "../window/fixtures.js";
import { expectInvalidRequest, fromJsonText, wire } from "./gateway-error-of.js";

const preflight = { check: "preflight", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;

function chat(body: ChatCompletionCreateParamsNonStreaming) {
  return parseChatCompletion(wire(body));
}

describe("parseChatCompletion", () => {
  it("reads the model and the stream flag", () => {
    const call = parseChatCompletion({ model: "gpt-4o-mini", stream: true, messages: [] });
    expect(call.model).toBe("gpt-4o-mini");
    expect(call.stream).toBe(true);
  });

  it("reads an absent stream flag as not streaming and an absent model as undefined", () => {
    const call = parseChatCompletion({ messages: [] });
    expect(call.stream).toBe(false);
    expect(call.model).toBeUndefined();
  });

  it("takes a user message's string content as message text", () => {
    const call = chat({ model: "m", messages: [{ role: "user", content: "Hello" }] });
    expect(call.messages).toEqual(["Hello"]);
    expect(call.system).toEqual([]);
  });

  it("takes system and developer messages as system text", () => {
    const call = chat({
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "developer", content: "Cite ids." },
        { role: "user", content: "Go." },
      ],
    });
    expect(call.system).toEqual(["Be brief.", "Cite ids."]);
    expect(call.messages).toEqual(["Go."]);
  });

  it("takes the text parts of a system message's content array as system text", () => {
    const call = chat({ model: "m", messages: [{ role: "system", content: [{ type: "text", text: "Rules" }] }] });
    expect(call.system).toEqual(["Rules"]);
  });

  it("takes every text part of a content array as its own text", () => {
    const call = chat({
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "one" },
            { type: "text", text: "two" },
          ],
        },
      ],
    });
    expect(call.messages).toEqual(["one", "two"]);
  });

  it("counts image_url, input_audio and file parts as media parts, not as text", () => {
    const call = chat({
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Look" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
            { type: "file", file: { file_data: "JVBERi0=", filename: "a.pdf" } },
          ],
        },
      ],
    });
    expect(call.mediaParts).toBe(3);
    // The file name is text the model sees.
    expect(call.messages).toEqual(["Look", "a.pdf"]);
  });

  it("takes an assistant message's refusal, as a field or as a part, as message text", () => {
    const call = chat({
      model: "m",
      messages: [
        { role: "assistant", content: null, refusal: "No." },
        { role: "assistant", content: [{ type: "refusal", refusal: "Not that." }] },
      ],
    });
    expect(call.messages).toEqual(["No.", "Not that."]);
  });

  it("takes a tool call as its function name and its arguments text exactly as sent", () => {
    const call = chat({
      model: "m",
      messages: [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"id": 7}' } }],
        },
      ],
    });
    expect(call.messages).toEqual(["lookup", '{"id": 7}']);
  });

  it("takes structured tool call arguments as compact JSON", () => {
    const call = parseChatCompletion({
      messages: [
        {
          role: "assistant",
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: { id: 7 } } }],
        },
      ],
    });
    expect(call.messages).toEqual(["f", '{"id":7}']);
  });

  it("takes a custom tool call as its name and input", () => {
    const call = chat({
      model: "m",
      messages: [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "custom", custom: { name: "shell", input: "ls -la" } }],
        },
      ],
    });
    expect(call.messages).toEqual(["shell", "ls -la"]);
  });

  it("takes a deprecated function_call of an assistant message as its name and arguments", () => {
    const call = parseChatCompletion({
      messages: [{ role: "assistant", content: null, function_call: { name: "lookup", arguments: '{"id":1}' } }],
    });
    expect(call.messages).toEqual(["lookup", '{"id":1}']);
  });

  it("takes a tool message's content as message text", () => {
    const call = chat({ model: "m", messages: [{ role: "tool", tool_call_id: "call_1", content: "found" }] });
    expect(call.messages).toEqual(["found"]);
  });

  it("keeps the assistant's text and tool calls in order", () => {
    const call = chat({
      model: "m",
      messages: [
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
        },
      ],
    });
    expect(call.messages).toEqual(["Checking.", "f", "{}"]);
  });

  it("counts a content part of an unknown type as an unknown field, its whole compact JSON", () => {
    const call = parseChatCompletion({ messages: [{ role: "user", content: [{ type: "future_part", value: 1 }] }] });
    expect(call.messages).toEqual([]);
    expect(call.other).toEqual([
      { path: "messages[0].content[0]", chars: '{"type":"future_part","value":1}'.length, unknown: true },
    ]);
  });

  it("notes an unknown member inside a tool declaration or a named tool choice as unknown, counting 0 beside the whole", () => {
    const tool = { type: "function", function: { name: "f", parameters: {}, x: "hidden" } };
    const call = parseChatCompletion({
      messages: [],
      tools: [tool],
      tool_choice: { type: "function", function: { name: "f" }, y: 1 },
    });
    expect(call.tools).toEqual([tool]);
    expect(call.other).toEqual([
      { path: "tools[0].function.x", chars: 0, unknown: true },
      {
        path: "tool_choice",
        chars: JSON.stringify({ type: "function", function: { name: "f" }, y: 1 }).length + 14,
        unknown: false,
      },
      { path: "tool_choice.y", chars: 0, unknown: true },
    ]);
  });

  it("collects tools and deprecated functions as tool declarations", () => {
    const tool = { type: "function", function: { name: "a" } };
    const legacy = { name: "b", parameters: { type: "object" } };
    const call = parseChatCompletion({ messages: [], tools: [tool], functions: [legacy] });
    expect(call.tools).toEqual([tool, legacy]);
  });

  it("takes response_format.json_schema.schema as the response schema", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } } };
    const call = chat({
      model: "m",
      messages: [],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema } },
    });
    expect(call.responseSchema).toEqual(schema);
  });

  it("has no response schema for a json_object or text response_format", () => {
    expect(chat({ model: "m", messages: [], response_format: { type: "json_object" } }).responseSchema).toBeUndefined();
    expect(chat({ model: "m", messages: [], response_format: { type: "text" } }).responseSchema).toBeUndefined();
  });

  it("records no cached prefix", () => {
    expect(chat({ model: "m", messages: [{ role: "user", content: "x" }] }).cachedPrefix).toBeUndefined();
  });

  it("does not change the body it parses", () => {
    const body = wire({
      messages: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      response_format: { type: "json_schema", json_schema: { name: "a", schema: { type: "object" } } },
    });
    const before = structuredClone(body);
    parseChatCompletion(body);
    expect(body).toEqual(before);
  });
});

describe("parseChatCompletion refusing wrong field types", () => {
  const secret = "SECRET-PROMPT-TEXT";
  const cases: { what: string; param: string; body: JsonObject }[] = [
    { what: "missing messages", param: "messages", body: { model: "m" } },
    { what: "messages that are a string", param: "messages", body: { messages: secret } },
    { what: "a message that is a string", param: "messages[1]", body: { messages: [{ role: "user" }, secret] } },
    { what: "a role that is not a string", param: "messages[0].role", body: { messages: [{ role: [secret] }] } },
    {
      what: "content that is an object",
      param: "messages[0].content",
      body: { messages: [{ role: "user", content: { text: secret } }] },
    },
    {
      what: "content that is a number",
      param: "messages[0].content",
      body: { messages: [{ role: "user", content: 4711 }] },
    },
    {
      what: "a content part that is a string",
      param: "messages[0].content[1]",
      body: { messages: [{ role: "user", content: [{ type: "text", text: "ok" }, secret] }] },
    },
    {
      what: "a content part without a type",
      param: "messages[0].content[0].type",
      body: { messages: [{ role: "user", content: [{ text: secret }] }] },
    },
    {
      what: "a text part whose text is not a string",
      param: "messages[2].content[0].text",
      body: {
        messages: [
          { role: "system", content: "a" },
          { role: "user", content: "b" },
          { role: "user", content: [{ type: "text", text: [secret] }] },
        ],
      },
    },
    {
      what: "a refusal that is not a string",
      param: "messages[0].refusal",
      body: { messages: [{ role: "assistant", refusal: { secret } }] },
    },
    {
      what: "tool_calls that are not an array",
      param: "messages[0].tool_calls",
      body: { messages: [{ role: "assistant", tool_calls: secret }] },
    },
    {
      what: "a tool call that is not an object",
      param: "messages[0].tool_calls[0]",
      body: { messages: [{ role: "assistant", tool_calls: [secret] }] },
    },
    {
      what: "a function_call that is not an object",
      param: "messages[0].function_call",
      body: { messages: [{ role: "assistant", function_call: secret }] },
    },
    { what: "a model that is not a string", param: "model", body: { model: [secret], messages: [] } },
    { what: "a stream flag that is a string", param: "stream", body: { stream: secret, messages: [] } },
    { what: "tools that are an object", param: "tools", body: { messages: [], tools: { secret } } },
    { what: "functions that are a string", param: "functions", body: { messages: [], functions: secret } },
    {
      what: "a response_format that is a string",
      param: "response_format",
      body: { messages: [], response_format: secret },
    },
    {
      what: "a json_schema response_format without json_schema",
      param: "response_format.json_schema",
      body: { messages: [], response_format: { type: "json_schema" } },
    },
    {
      what: "a response schema that is a string",
      param: "response_format.json_schema.schema",
      body: { messages: [], response_format: { type: "json_schema", json_schema: { name: "a", schema: secret } } },
    },
  ];

  for (const { what, param, body } of cases) {
    it(`refuses ${what} as INVALID_REQUEST naming ${param}, without the value`, () => {
      expectInvalidRequest(() => parseChatCompletion(body), param, [secret, "4711"]);
    });
  }

  // (`messages[0].tool_calls[0]`) to readInvocation for the value of `function`/`custom`, so
  // errors inside it name a field that does not exist (`messages[0].tool_calls[0].name`).
  // Suggested fix: pass `${path}.tool_calls[${index}].function` (or `.custom` when that is
  // the member present) as the invocation's path.
  it("refuses a tool call function name that is not a string, naming messages[0].tool_calls[0].function.name", () => {
    const body = {
      messages: [{ role: "assistant", tool_calls: [{ type: "function", function: { name: [secret] } }] }],
    };
    expectInvalidRequest(() => parseChatCompletion(body), "messages[0].tool_calls[0].function.name", [secret]);
  });

  // an object is reported as `messages[0].tool_calls[0]` instead of `.function`.
  it("refuses a tool call function that is a string, naming messages[0].tool_calls[0].function", () => {
    const body = { messages: [{ role: "assistant", tool_calls: [{ type: "function", function: secret }] }] };
    expectInvalidRequest(() => parseChatCompletion(body), "messages[0].tool_calls[0].function", [secret]);
  });
});

describe("measuring a Chat Completions body", () => {
  const bodyText = String.raw`{
    "model": "gpt-4o-mini",
    "temperature": 0.2,
    "top_p": 0.9,
    "max_tokens": 4096,
    "seed": 7,
    "stop": ["END"],
    "messages": [
      { "role": "system", "content": "Be brief.\nCite ids." },
      { "role": "developer", "content": [{ "type": "text", "text": "Schreibe auf Deutsch: \u00e4\u00f6\u00fc" }] },
      { "role": "user", "content": [
        { "type": "text", "text": "Caf\u00e9 \ud83d\ude00?" },
        { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } },
        { "type": "input_audio", "input_audio": { "data": "UklGRg==", "format": "wav" } },
        { "type": "file", "file": { "file_data": "JVBERi0=", "filename": "a.pdf" } }
      ] },
      { "role": "assistant", "content": null, "tool_calls": [
        { "id": "call_1", "type": "function", "function": { "name": "lookup", "arguments": "{\"id\": 7}" } }
      ] },
      { "role": "tool", "tool_call_id": "call_1", "content": "found \ud834\udd1e" }
    ],
    "tools": [
      { "type": "function", "function": { "name": "lookup", "description": "Finds a record by id.",
        "parameters": { "type": "object", "properties": { "id": { "type": "integer" } } } } }
    ],
    "response_format": { "type": "json_schema", "json_schema": { "name": "answer", "strict": true,
      "schema": { "type": "object", "properties": { "answer": { "type": "string", "description": "R\u00e9ponse" } } } } }
  }`;
  const compactTool =
    '{"type":"function","function":{"name":"lookup","description":"Finds a record by id.","parameters":{"type":"object","properties":{"id":{"type":"integer"}}}}}';
  const compactSchema = '{"type":"object","properties":{"answer":{"type":"string","description":"Réponse"}}}';
  const size = measure(parseChatCompletion(fromJsonText(bodyText)), preflight);

  it("counts system and developer messages as system_chars", () => {
    // "Be brief.\nCite ids." (19) + "Schreibe auf Deutsch: äöü" (25)
    expect(size.system_chars).toBe(19 + 25);
  });

  it("counts user text, the file name, tool call name and arguments, and tool results as message_chars", () => {
    // "Café 😀?" (7) + "a.pdf" (5) + "lookup" (6) + '{"id": 7}' (9) + "found 𝄞" (7)
    expect(size.message_chars).toBe(7 + 5 + 6 + 9 + 7);
  });

  it("counts the tool call ids as other_chars, each as the compact JSON of its key and value", () => {
    expect(size.other_chars).toBe('"id":"call_1"'.length + '"tool_call_id":"call_1"'.length);
  });

  it("counts the tools as compact JSON, whatever the whitespace of the body", () => {
    expect(size.tool_chars).toBe(compactTool.length);
  });

  it("counts the response schema as compact JSON, non-ASCII as one code point, with its name", () => {
    expect(size.schema_chars).toBe(compactSchema.length + "answer".length);
  });

  it("counts the image, audio and file parts as media_parts", () => {
    expect(size.media_parts).toBe(3);
  });

  it("adds the categories into the totals and reports the policy", () => {
    const total = 44 + 34 + compactTool.length + compactSchema.length + 6 + 36;
    expect(size.total_chars).toBe(total);
    expect(size.conservative_total_chars).toBe(total + 1500);
    expect(size.policy).toBe(boundedRef);
  });

  it("measures the same body written compactly exactly alike", () => {
    const compactBody = fromJsonText(JSON.stringify(JSON.parse(bodyText)));
    expect(measure(parseChatCompletion(compactBody), preflight)).toEqual(size);
  });

  it("does not count the model, temperature, top_p, max_tokens, seed or stop", () => {
    const {
      model: _m,
      temperature: _t,
      top_p: _p,
      max_tokens: _x,
      seed: _s,
      stop: _o,
      ...bare
    } = fromJsonText(bodyText);
    expect(measure(parseChatCompletion(bare), preflight)).toEqual(size);
  });

  it("counts the characters that JSON escapes stand for, not the escapes", () => {
    const call = parseChatCompletion(
      fromJsonText(String.raw`{"messages":[{"role":"user","content":"a\nb \u00e9 \ud83d\ude00 \"q\" \\ \ud800"}]}`),
    );
    // a, newline, b, space, é, space, 😀, space, ", q, ", space, \, space, lone surrogate
    expect(measure(call, preflight).message_chars).toBe(15);
  });
});
