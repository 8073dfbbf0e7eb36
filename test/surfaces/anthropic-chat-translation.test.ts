import OpenAI from "openai";
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/json/json-object.js";
import { parseMessages } from "../../src/surfaces/anthropic/messages-body.js";
import {
  anthropicChatTranslation,
  anthropicThinkingBudgets,
  defaultAnthropicMaxTokens,
} from "../../src/surfaces/anthropic/openai-chat-translation.js";
import { type ReasoningLevel, reasoningLevels, type TranslationContext } from "../../src/surfaces/translation.js";
import { expectInvalidRequest, gatewayErrorOf, wire } from "./gateway-error-of.js";

const context: TranslationContext = {
  upstreamModel: "claude-sonnet-4-5-20250929",
  publicModel: "claude-sonnet",
  reasoning: undefined,
  droppable: [],
  id: "chatcmpl-anthropic1",
  created: 1_760_000_000,
};

const user = { role: "user", content: "Hello" };

/** The native Messages body for a Chat Completions body (built in code, taken through JSON text). */
function native(body: object, overrides: Partial<TranslationContext> = {}): JsonObject {
  const request = anthropicChatTranslation.request(wire({ model: "claude-sonnet", ...body }), {
    ...context,
    ...overrides,
  });
  expect(request.path).toBe("/v1/messages");
  return request.body;
}

/** Asserts the request is refused as INVALID_REQUEST naming `param`. */
function expectRefused(body: object, param: string, overrides: Partial<TranslationContext> = {}): string {
  expectInvalidRequest(() => native(body, overrides), param);
  return gatewayErrorOf(() => native(body, overrides)).message;
}

const pdf = Buffer.from("%PDF-1.4 tiny").toString("base64");
const png = "iVBORw0KGgo=";

describe("anthropicChatTranslation.request: parameters", () => {
  it("sends the upstream model to /v1/messages with the default max_tokens", () => {
    expect(native({ messages: [user] })).toEqual({
      model: "claude-sonnet-4-5-20250929",
      max_tokens: defaultAnthropicMaxTokens,
      messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
    });
    expect(defaultAnthropicMaxTokens).toBe(4096);
  });

  it("streams only when the client streams", () => {
    expect(native({ messages: [user], stream: true }).stream).toBe(true);
    expect(native({ messages: [user], stream: false })).not.toHaveProperty("stream");
  });

  it("takes max_completion_tokens, else max_tokens", () => {
    expect(native({ messages: [user], max_tokens: 300 }).max_tokens).toBe(300);
    expect(native({ messages: [user], max_tokens: 300, max_completion_tokens: 500 }).max_tokens).toBe(500);
  });

  it("maps temperature, top_p, stop and user", () => {
    const body = native({ messages: [user], temperature: 0.3, top_p: 0.9, stop: "END", user: "u-42" });
    expect(body).toMatchObject({
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ["END"],
      metadata: { user_id: "u-42" },
    });
    expect(native({ messages: [user], stop: ["a", "b"] }).stop_sequences).toEqual(["a", "b"]);
  });

  it("consumes the parameters without a counterpart that change nothing the client relies on", () => {
    const body = native({
      messages: [user],
      stream: true,
      stream_options: { include_usage: true },
      store: true,
      metadata: { trace: "t1" },
      safety_identifier: "s",
      prompt_cache_key: "k",
      service_tier: "auto",
      reasoning_effort: "low",
      parallel_tool_calls: true,
      n: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      logprobs: false,
      seed: null,
    });
    expect(Object.keys(body).sort()).toEqual(["max_tokens", "messages", "model", "stream"]);
  });

  it("refuses a temperature above Anthropic's range", () => {
    expectRefused({ messages: [user], temperature: 1.5 }, "temperature");
  });

  const unmatched: [string, unknown][] = [
    ["n", 2],
    ["logit_bias", { "50256": -100 }],
    ["logprobs", true],
    ["top_logprobs", 2],
    ["presence_penalty", 0.5],
    ["frequency_penalty", 0.5],
    ["seed", 7],
    ["audio", { voice: "alloy", format: "mp3" }],
    ["modalities", ["text", "audio"]],
    ["prediction", { type: "content", content: "x" }],
    ["web_search_options", {}],
    ["functions", [{ name: "f", parameters: { type: "object" } }]],
    ["function_call", "auto"],
    ["verbosity", "low"],
    ["prompt_cache_retention", "24h"],
    ["vendor_extension", { keep: true }],
  ];

  it.each(unmatched)("refuses '%s', naming it and what to do", (name, value) => {
    const message = expectRefused({ messages: [user], [name]: value }, name);
    expect(message).toContain(`'${name}' has no counterpart in the Anthropic Messages API`);
    expect(message).toContain("remove it, or list");
    expect(message).toContain("droppable parameters");
    expect(message).toContain("Nothing was sent.");
  });

  it.each(unmatched)("drops '%s' when the policy lists it as droppable", (name, value) => {
    expect(native({ messages: [user], [name]: value }, { droppable: [name] })).not.toHaveProperty(name);
  });
});

describe("anthropicChatTranslation.request: messages", () => {
  it("puts one system text in `system` as a string", () => {
    const body = native({ messages: [{ role: "system", content: "Be terse." }, user] });
    expect(body.system).toBe("Be terse.");
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hello" }] }]);
  });

  it("puts several system and developer texts in `system` as blocks, in order", () => {
    const body = native({
      messages: [
        { role: "system", content: "One." },
        user,
        { role: "developer", content: [{ type: "text", text: "Two." }] },
      ],
    });
    expect(body.system).toEqual([
      { type: "text", text: "One." },
      { type: "text", text: "Two." },
    ]);
  });

  it("maps text, image and PDF parts to Anthropic blocks", () => {
    const body = native({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Look:" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${png}`, detail: "high" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
            { type: "file", file: { filename: "a.pdf", file_data: `data:application/pdf;base64,${pdf}` } },
            { type: "file", file: { filename: "b.pdf", file_data: pdf } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look:" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
          { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf }, title: "a.pdf" },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf }, title: "b.pdf" },
        ],
      },
    ]);
  });

  it("maps a plain-text file to a text document and a file URL to a URL document", () => {
    const text = Buffer.from("Rows: 3").toString("base64");
    const body = native({
      messages: [
        {
          role: "user",
          content: [
            { type: "file", file: { file_data: `data:text/plain;base64,${text}` } },
            { type: "file", file: { file_url: "https://example.com/report.pdf" } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "document", source: { type: "text", media_type: "text/plain", data: "Rows: 3" } },
          { type: "document", source: { type: "url", url: "https://example.com/report.pdf" } },
        ],
      },
    ]);
    expectRefused(
      {
        messages: [{ role: "user", content: [{ type: "file", file: { file_data: `data:audio/wav;base64,${text}` } }] }],
      },
      "messages[0].content[0].file.file_data",
    );
  });

  it("marks an explicit cache breakpoint as Anthropic's cache_control", () => {
    const body = native({
      messages: [
        { role: "user", content: [{ type: "text", text: "Long.", prompt_cache_breakpoint: { mode: "explicit" } }] },
      ],
    });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Long.", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  it("refuses audio input and stored files, naming the part", () => {
    const messages = [
      { role: "system", content: "S." },
      user,
      { role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] },
    ];
    expectRefused({ messages }, "messages[2].content[0].input_audio");
    expectRefused(
      {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "x" },
              { type: "file", file: { file_id: "f" } },
            ],
          },
        ],
      },
      "messages[0].content[1].file.file_id",
    );
  });

  it("refuses an image data URL that is not base64", () => {
    expectRefused(
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png,raw" } }] }] },
      "messages[0].content[0].image_url.url",
    );
  });

  it("turns tool calls into tool_use blocks and tool messages into one user message of tool results", () => {
    const body = native({
      messages: [
        user,
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"id":7}' } },
            { id: "call_2", type: "function", function: { name: "clock", arguments: "" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "found" },
        { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "12:00" }] },
        { role: "user", content: "Thanks." },
      ],
    });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hello" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_1", name: "lookup", input: { id: 7 } },
          { type: "tool_use", id: "call_2", name: "clock", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: "found" },
          { type: "tool_result", tool_use_id: "call_2", content: "12:00" },
          { type: "text", text: "Thanks." },
        ],
      },
    ]);
  });

  it("merges consecutive messages of one role", () => {
    const body = native({
      messages: [user, { role: "user", content: "Again." }, { role: "assistant", content: "Hi." }],
    });
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Hello" },
          { type: "text", text: "Again." },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Hi." }] },
    ]);
  });

  it("refuses tool call arguments that are not a JSON object", () => {
    const call = (args: string) => ({
      messages: [
        user,
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }] },
      ],
    });
    expectRefused(call("{not json"), "messages[1].tool_calls[0].function.arguments");
    expectRefused(call("[1]"), "messages[1].tool_calls[0].function.arguments");
  });

  it("refuses the legacy function role and a message's function_call", () => {
    expectRefused({ messages: [user, { role: "function", name: "f", content: "x" }] }, "messages[1].role");
    expectRefused(
      { messages: [user, { role: "assistant", content: "x", function_call: { name: "f", arguments: "{}" } }] },
      "messages[1].function_call",
    );
  });

  it("refuses a message's name unless the policy lets it be dropped", () => {
    const body = { messages: [{ role: "user", name: "alice", content: "Hi" }] };
    expect(expectRefused(body, "messages[0].name")).toContain("list 'name' under the policy's droppable parameters");
    expect(native(body, { droppable: ["name"] }).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi" }] },
    ]);
  });
});

describe("anthropicChatTranslation.request: tools and response format", () => {
  const lookup = {
    type: "function",
    function: {
      name: "lookup",
      description: "Finds a record.",
      parameters: { type: "object", properties: { id: { type: "integer" } } },
    },
  };
  const clock = { type: "function", function: { name: "clock" } };

  it("maps function tools, with an empty object schema when none is given", () => {
    expect(native({ messages: [user], tools: [lookup, clock] }).tools).toEqual([
      {
        name: "lookup",
        description: "Finds a record.",
        input_schema: { type: "object", properties: { id: { type: "integer" } } },
      },
      { name: "clock", input_schema: { type: "object" } },
    ]);
  });

  it("refuses a tool type other than function, naming it", () => {
    expectRefused(
      { messages: [user], tools: [lookup, { type: "custom", custom: { name: "grammar" } }] },
      "tools[1].type",
    );
  });

  it.each([
    ["auto", { type: "auto" }],
    ["required", { type: "any" }],
    ["none", { type: "none" }],
    [
      { type: "function", function: { name: "lookup" } },
      { type: "tool", name: "lookup" },
    ],
  ])("maps tool_choice %j", (choice, expected) => {
    expect(native({ messages: [user], tools: [lookup], tool_choice: choice }).tool_choice).toEqual(expected);
  });

  it("turns parallel_tool_calls: false into disable_parallel_tool_use", () => {
    expect(native({ messages: [user], tools: [lookup], parallel_tool_calls: false }).tool_choice).toEqual({
      type: "auto",
      disable_parallel_tool_use: true,
    });
    expect(
      native({ messages: [user], tools: [lookup], tool_choice: "required", parallel_tool_calls: false }).tool_choice,
    ).toEqual({ type: "any", disable_parallel_tool_use: true });
  });

  it("refuses a tool_choice kind without a counterpart", () => {
    expectRefused(
      { messages: [user], tools: [lookup], tool_choice: { type: "allowed_tools", allowed_tools: {} } },
      "tool_choice.type",
    );
  });

  it("sends a JSON schema as the native response schema in output_config.format", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const body = native({
      messages: [user],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema, strict: true } },
    });
    expect(body.output_config).toEqual({ format: { type: "json_schema", schema } });
    expect(parseMessages(body).responseSchema).toEqual(schema);
  });

  it("refuses json_object unless droppable, and sends nothing for text", () => {
    const jsonObject = { messages: [user], response_format: { type: "json_object" } };
    expect(expectRefused(jsonObject, "response_format")).toContain("json_schema");
    expect(native(jsonObject, { droppable: ["response_format"] })).not.toHaveProperty("output_config");
    expect(native({ messages: [user], response_format: { type: "text" } })).not.toHaveProperty("output_config");
  });

  it("writes a body the gateway's Anthropic surface reads", () => {
    const body = native({
      messages: [
        { role: "system", content: "Be terse." },
        {
          role: "user",
          content: [
            { type: "text", text: "Look:" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
            { type: "file", file: { filename: "a.pdf", file_data: `data:application/pdf;base64,${pdf}` } },
          ],
        },
        {
          role: "assistant",
          tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "found" },
      ],
      tools: [lookup],
      tool_choice: "auto",
    });
    const call = parseMessages(body);
    expect(call.system).toEqual(["Be terse."]);
    expect(call.mediaParts).toBe(2);
    expect(call.unmeasured).toEqual([]);
  });
});

describe("anthropicChatTranslation.request: reasoning", () => {
  it("has one budget per reasoning level", () => {
    expect(Object.keys(anthropicThinkingBudgets).sort()).toEqual([...reasoningLevels].sort());
    expect(anthropicThinkingBudgets).toEqual({
      none: undefined,
      low: 1024,
      medium: 4096,
      high: 16000,
      xhigh: 32000,
      max: 64000,
    });
  });

  it("sends no thinking when the call asks for no level", () => {
    expect(native({ messages: [user] })).not.toHaveProperty("thinking");
  });

  it("turns thinking off for none", () => {
    expect(native({ messages: [user] }, { reasoning: "none" }).thinking).toEqual({ type: "disabled" });
  });

  it.each(reasoningLevels.filter((level) => level !== "none"))("enables thinking with the %s budget", (level) => {
    const budget = anthropicThinkingBudgets[level as ReasoningLevel] as number;
    const body = native({ messages: [user] }, { reasoning: level });
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: budget });
    expect(body.max_tokens as number).toBeGreaterThan(budget);
  });

  it("raises max_tokens above the budget by the client's max_tokens, or the default", () => {
    expect(native({ messages: [user] }, { reasoning: "medium" }).max_tokens).toBe(4096 + defaultAnthropicMaxTokens);
    expect(native({ messages: [user], max_tokens: 500 }, { reasoning: "low" }).max_tokens).toBe(1024 + 500);
    expect(native({ messages: [user], max_completion_tokens: 8000 }, { reasoning: "low" }).max_tokens).toBe(8000);
    expect(native({ messages: [user] }, { reasoning: "low" }).max_tokens).toBe(defaultAnthropicMaxTokens);
  });

  it("refuses a temperature other than 1 and top_p while thinking", () => {
    expectRefused({ messages: [user], temperature: 0.2 }, "temperature", { reasoning: "high" });
    expectRefused({ messages: [user], top_p: 0.5 }, "top_p", { reasoning: "high" });
    expect(native({ messages: [user], temperature: 1 }, { reasoning: "high" }).temperature).toBe(1);
    expect(native({ messages: [user], temperature: 0.2 }, { reasoning: "none" }).temperature).toBe(0.2);
  });

  it("refuses a forced tool call while thinking", () => {
    const tools = [{ type: "function", function: { name: "f" } }];
    expectRefused({ messages: [user], tools, tool_choice: "required" }, "tool_choice", { reasoning: "low" });
    expect(native({ messages: [user], tools, tool_choice: "auto" }, { reasoning: "low" }).tool_choice).toEqual({
      type: "auto",
    });
  });
});

/** The members of a Messages answer the tests build streams from. */
interface NativeAnswer {
  content: JsonObject[];
  stop_reason: string;
  usage: { output_tokens: number; [count: string]: number };
  [member: string]: unknown;
}

/** A Messages answer as Anthropic sends it. */
const textAnswer: NativeAnswer = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [
    { type: "thinking", thinking: "Let me see.", signature: "c2ln" },
    { type: "text", text: "Hello, " },
    { type: "text", text: "world." },
  ],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 },
};

const toolAnswer: NativeAnswer = {
  ...textAnswer,
  content: [
    { type: "text", text: "Looking." },
    { type: "tool_use", id: "toolu_1", name: "lookup", input: { id: 7, tags: ["a"] } },
    { type: "tool_use", id: "toolu_2", name: "clock", input: {} },
  ],
  stop_reason: "tool_use",
};

/** The openai SDK, answering from `body` as the gateway would. */
function sdkAnswering(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://gateway.test/v1",
    maxRetries: 0,
    fetch: async () => new Response(body, { headers: { "content-type": contentType } }),
  });
}

describe("anthropicChatTranslation.answer", () => {
  it("joins the text blocks, leaving thinking out, and counts cached prompt tokens", () => {
    expect(anthropicChatTranslation.answer(wire(textAnswer), context)).toEqual({
      id: "chatcmpl-anthropic1",
      object: "chat.completion",
      created: 1_760_000_000,
      model: "claude-sonnet",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hello, world.", refusal: null },
          finish_reason: "stop",
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 130,
        completion_tokens: 5,
        total_tokens: 135,
        prompt_tokens_details: { cached_tokens: 100 },
      },
    });
  });

  it("turns tool_use blocks into tool calls", () => {
    const completion = anthropicChatTranslation.answer(wire(toolAnswer), context) as unknown as ChatCompletion;
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBe("Looking.");
    expect(choice?.message.tool_calls).toEqual([
      { id: "toolu_1", type: "function", function: { name: "lookup", arguments: '{"id":7,"tags":["a"]}' } },
      { id: "toolu_2", type: "function", function: { name: "clock", arguments: "{}" } },
    ]);
  });

  it("has null content when the answer has no text", () => {
    const completion = anthropicChatTranslation.answer(
      wire({ ...toolAnswer, content: [toolAnswer.content[1]] }),
      context,
    );
    expect((completion as unknown as ChatCompletion).choices[0]?.message.content).toBeNull();
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["pause_turn", "stop"],
    ["max_tokens", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
  ])("finishes %s as %s", (stopReason, finishReason) => {
    const completion = anthropicChatTranslation.answer(wire({ ...textAnswer, stop_reason: stopReason }), context);
    expect((completion as unknown as ChatCompletion).choices[0]?.finish_reason).toBe(finishReason);
  });

  it("reads as a ChatCompletion through the openai SDK", async () => {
    const answer = anthropicChatTranslation.answer(wire(toolAnswer), context);
    const client = sdkAnswering(JSON.stringify(answer), "application/json");
    const completion: ChatCompletion = await client.chat.completions.create({ model: "claude-sonnet", messages: [] });
    expect(completion).toEqual(answer);
  });

  it("round-trips tool calls back into the next request", () => {
    const completion = anthropicChatTranslation.answer(wire(toolAnswer), context) as unknown as ChatCompletion;
    const message = completion.choices[0]?.message;
    const body = native({
      messages: [user, message, { role: "tool", tool_call_id: "toolu_1", content: "found" }],
    });
    expect((body.messages as JsonObject[])[1]).toEqual({ role: "assistant", content: toolAnswer.content });
  });
});

/** The Messages stream events of an answer: text blocks by small deltas, tool input by JSON fragments. */
function eventsOf(message: NativeAnswer): JsonObject[] {
  const events: JsonObject[] = [
    {
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
    },
    { type: "ping" },
  ];
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const piece of (block.text as string).match(/.{1,3}/gs) ?? []) {
        events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
      }
    } else if (block.type === "thinking") {
      events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } });
      events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: "Hmm." } });
      events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: "c2ln" } });
    } else {
      const { input, ...start } = block;
      events.push({ type: "content_block_start", index, content_block: { ...start, input: {} } });
      const json = JSON.stringify(input);
      if (json !== "{}") {
        for (const piece of [json.slice(0, 4), json.slice(4)]) {
          events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
        }
      }
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    },
    { type: "message_stop" },
  );
  return events.map(wire);
}

/** The chunks a whole stream becomes, closing ones included. */
function streamChunks(events: JsonObject[], body: object = {}): ChatCompletionChunk[] {
  const translator = anthropicChatTranslation.stream(wire(body), context);
  const chunks = [...events.flatMap((event) => translator.event(event)), ...translator.end()];
  return chunks as unknown as ChatCompletionChunk[];
}

/** The chunks as server-sent events, with the `[DONE]` the gateway adds. */
function sse(chunks: ChatCompletionChunk[]): string {
  return `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")}data: [DONE]\n\n`;
}

describe("anthropicChatTranslation.stream", () => {
  it("starts with the assistant role and streams text that adds up to the answer", () => {
    const chunks = streamChunks(eventsOf(textAnswer));
    expect(chunks[0]).toEqual({
      id: "chatcmpl-anthropic1",
      object: "chat.completion.chunk",
      created: 1_760_000_000,
      model: "claude-sonnet",
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null }],
    });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    const answer = anthropicChatTranslation.answer(wire(textAnswer), context) as unknown as ChatCompletion;
    expect(text).toBe(answer.choices[0]?.message.content);
    expect(chunks.at(-1)?.choices).toEqual([{ index: 0, delta: {}, finish_reason: "stop", logprobs: null }]);
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason != null)).toHaveLength(1);
  });

  it("streams tool calls whose arguments reassemble to the answer's", () => {
    const chunks = streamChunks(eventsOf(toolAnswer));
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: "toolu_1",
      type: "function",
      function: { name: "lookup", arguments: "" },
    });
    const argumentsOf = (index: number) =>
      calls
        .filter((call) => call.index === index)
        .map((call) => call.function?.arguments ?? "")
        .join("");
    const answer = anthropicChatTranslation.answer(wire(toolAnswer), context) as unknown as ChatCompletion;
    const answered = answer.choices[0]?.message.tool_calls ?? [];
    expect(answered.map((_, index) => argumentsOf(index))).toEqual(
      answered.map((call) => (call.type === "function" ? call.function.arguments : "")),
    );
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("ends with a usage chunk only when the client asks for usage", () => {
    const events = eventsOf(textAnswer);
    const withUsage = streamChunks(events, { stream_options: { include_usage: true } });
    expect(withUsage.at(-1)).toEqual({
      id: "chatcmpl-anthropic1",
      object: "chat.completion.chunk",
      created: 1_760_000_000,
      model: "claude-sonnet",
      choices: [],
      usage: {
        prompt_tokens: 130,
        completion_tokens: 5,
        total_tokens: 135,
        prompt_tokens_details: { cached_tokens: 100 },
      },
    });
    const translator = anthropicChatTranslation.stream(wire({}), context);
    for (const event of events) translator.event(event);
    expect(translator.end()).toEqual([]);
  });

  it("reads as ChatCompletionChunks and assembles to the answer through the openai SDK", async () => {
    for (const message of [textAnswer, toolAnswer]) {
      const chunks = streamChunks(eventsOf(message), { stream_options: { include_usage: true } });
      const streamed: ChatCompletionChunk[] = [];
      const client = sdkAnswering(sse(chunks), "text/event-stream");
      const stream = await client.chat.completions.create({ model: "claude-sonnet", messages: [], stream: true });
      for await (const chunk of stream) streamed.push(chunk);
      expect(streamed).toEqual(chunks);

      const runner = sdkAnswering(sse(chunks), "text/event-stream").chat.completions.stream({
        model: "claude-sonnet",
        messages: [],
      });
      const final = await runner.finalChatCompletion();
      const answer = anthropicChatTranslation.answer(wire(message), context) as unknown as ChatCompletion;
      expect(final.choices[0]?.message.content).toBe(answer.choices[0]?.message.content);
      expect(final.choices[0]?.message.tool_calls ?? []).toEqual(answer.choices[0]?.message.tool_calls ?? []);
      expect(final.choices[0]?.finish_reason).toBe(answer.choices[0]?.finish_reason);
      expect(final.usage).toEqual(answer.usage);
    }
  });
});

describe("the output cap", () => {
  it("refuses a max_tokens Anthropic cannot take, naming the field the client set", () => {
    for (const value of [0, -5, 1.5]) {
      expect(expectRefused({ model: "m", messages: [user], max_tokens: value }, "max_tokens")).toContain(
        "whole number",
      );
      expect(
        expectRefused({ model: "m", messages: [user], max_completion_tokens: value }, "max_completion_tokens"),
      ).toContain("whole number");
    }
  });
});
