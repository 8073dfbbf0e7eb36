import OpenAI from "openai";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams,
} from "openai/resources/chat/completions";
import type {
  ResponseCreateParams,
  ResponseStreamEvent,
  ResponseTextDeltaEvent,
} from "openai/resources/responses/responses";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JsonObject } from "../../src/json/json-object.js";
import {
  carriedResponsesMembers,
  chatStreamToResponses,
  chatToResponse,
  consumedResponsesMembers,
  responsesToChat,
} from "../../src/surfaces/openai/responses-via-chat.js";
import { expectInvalidRequest, gatewayErrorOf, wire } from "./gateway-error-of.js";

/** A Responses body as the SDK types it, taken through JSON text. */
function toChat(body: ResponseCreateParams): JsonObject {
  return responsesToChat(wire(body));
}

/** The response object as the API sends it (the SDK adds `output_text` itself), with its `store` echo. */
import type { WireResponse } from "../../src/surfaces/openai/responses-via-chat/response-object.js";

const now = 1_760_000_000;
const id = "resp_abc123";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: now * 1000 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe("responsesToChat: input", () => {
  it("puts the instructions first as a system message and takes a string input as one user message", () => {
    const expected: ChatCompletionCreateParams = {
      model: "gemini-2.5-flash",
      messages: [
        { role: "system", content: "Be terse." },
        { role: "user", content: "Hello" },
      ],
    };
    expect(toChat({ model: "gemini-2.5-flash", instructions: "Be terse.", input: "Hello" })).toEqual(expected);
  });

  it("keeps each message's role and maps text, image and file parts to Chat Completions parts", () => {
    const chat = toChat({
      model: "m",
      input: [
        { role: "developer", content: "Rules" },
        { type: "message", role: "system", content: [{ type: "input_text", text: "More rules" }] },
        {
          role: "user",
          content: [
            { type: "input_text", text: "Look:" },
            { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "low" },
            { type: "input_file", file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" },
          ],
        },
      ],
    });
    const expected: ChatCompletionCreateParams["messages"] = [
      { role: "developer", content: "Rules" },
      { role: "system", content: [{ type: "text", text: "More rules" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Look:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } },
        ],
      },
    ];
    expect(chat.messages).toEqual(expected);
  });

  it("carries an explicit cache breakpoint on a part, which Chat Completions parts take too", () => {
    const chat = toChat({
      model: "m",
      input: [
        {
          role: "user",
          content: [{ type: "input_text", text: "Long prefix", prompt_cache_breakpoint: { mode: "explicit" } }],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Long prefix", prompt_cache_breakpoint: { mode: "explicit" } }] },
    ]);
  });

  it("takes a replayed output message as assistant text, leaving out its id, status, annotations and logprobs", () => {
    const chat = toChat({
      model: "m",
      input: [
        {
          type: "message",
          id: "msg_1",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Earlier", annotations: [], logprobs: [] }],
        },
        {
          type: "message",
          id: "msg_2",
          status: "completed",
          role: "assistant",
          content: [{ type: "refusal", refusal: "No." }],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "assistant", content: [{ type: "text", text: "Earlier" }] },
      { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
    ]);
  });

  it("joins consecutive function calls, and the assistant text before them, into one assistant message", () => {
    const chat = toChat({
      model: "m",
      input: [
        { role: "user", content: "Weather in Paris and Rome?" },
        { role: "assistant", content: "Looking." },
        { type: "function_call", id: "fc_1", call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
        {
          type: "function_call",
          call_id: "call_2",
          name: "weather",
          arguments: '{"city":"Rome"}',
          status: "completed",
        },
        { type: "function_call_output", call_id: "call_1", output: "18C" },
        {
          type: "function_call_output",
          call_id: "call_2",
          output: [
            { type: "input_text", text: "2" },
            { type: "input_text", text: "1C" },
          ],
        },
      ],
    });
    const expected: ChatCompletionCreateParams["messages"] = [
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
          { id: "call_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
      { role: "tool", tool_call_id: "call_2", content: "21C" },
    ];
    expect(chat.messages).toEqual(expected);
  });

  it("starts an assistant message for a function call that follows a user message", () => {
    const chat = toChat({
      model: "m",
      input: [
        { role: "user", content: "Go" },
        { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "Go" },
      { role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
    ]);
  });

  it("leaves out reasoning items, which carry no text for another provider", () => {
    const chat = toChat({
      model: "m",
      input: [
        { role: "user", content: "Q" },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque" },
        { role: "assistant", content: "A" },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "Q" },
      { role: "assistant", content: "A" },
    ]);
  });

  it("refuses an item reference, typed or not, and any other item type, naming it", () => {
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: [
            { role: "user", content: "Q" },
            { type: "item_reference", id: "msg_9" },
          ],
        }),
      "input[1].type",
    );
    expectInvalidRequest(() => responsesToChat({ model: "m", input: [{ id: "msg_9" }] }), "input[0].id");
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: [{ type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } }],
        }),
      "input[0].type",
    );
  });

  it("refuses a stored image or file, naming the field", () => {
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: [
            {
              role: "user",
              content: [
                { type: "input_text", text: "x" },
                { type: "input_image", file_id: "file-secret", detail: "auto" },
              ],
            },
          ],
        }),
      "input[0].content[1].file_id",
      ["file-secret"],
    );
    expectInvalidRequest(
      () =>
        toChat({ model: "m", input: [{ role: "user", content: [{ type: "input_file", file_id: "file-secret" }] }] }),
      "input[0].content[0].file_id",
      ["file-secret"],
    );
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: [{ role: "user", content: [{ type: "input_file", file_url: "https://x.test/secret.pdf" }] }],
        }),
      "input[0].content[0].file_url",
      ["secret.pdf"],
    );
  });

  it("refuses a part the role cannot carry in Chat Completions, and audio", () => {
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: [
            { role: "system", content: [{ type: "input_image", image_url: "https://x.test/a.png", detail: "auto" }] },
          ],
        }),
      "input[0].content[0].type",
    );
    expectInvalidRequest(
      // Audio input the SDK no longer types, as an older client sends it.
      () =>
        responsesToChat({
          model: "m",
          input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }],
        }),
      "input[0].content[0].type",
    );
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: [
            {
              type: "function_call_output",
              call_id: "c",
              output: [{ type: "input_image", image_url: "https://x.test/a.png", detail: "auto" }],
            },
          ],
        }),
      "input[0].output[0].type",
    );
  });

  it("refuses an item member without a counterpart, naming it", () => {
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}", namespace: "ns" }],
        }),
      "input[0].namespace",
    );
  });
});

describe("responsesToChat: tools, formats and parameters", () => {
  it("nests function tools and a named tool choice as Chat Completions does", () => {
    const chat = toChat({
      model: "m",
      input: "Go",
      tools: [
        { type: "function", name: "weather", description: "Weather now", parameters: { type: "object" }, strict: true },
        { type: "function", name: "noop", parameters: null, strict: null },
      ],
      tool_choice: { type: "function", name: "weather" },
    });
    expect(chat.tools).toEqual([
      {
        type: "function",
        function: { name: "weather", description: "Weather now", parameters: { type: "object" }, strict: true },
      },
      { type: "function", function: { name: "noop" } },
    ]);
    expect(chat.tool_choice).toEqual({ type: "function", function: { name: "weather" } });
  });

  it.each(["auto", "none", "required"] as const)("passes tool_choice %s as it is", (mode) => {
    expect(toChat({ model: "m", input: "Go", tool_choice: mode }).tool_choice).toBe(mode);
  });

  it("refuses built-in tools and tool choices, and function tool members without a counterpart", () => {
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: "Go",
          tools: [{ type: "function", name: "f", parameters: null, strict: null }, { type: "web_search" }],
        }),
      "tools[1].type",
    );
    expectInvalidRequest(
      () => toChat({ model: "m", input: "Go", tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] }),
      "tools[0].type",
    );
    expectInvalidRequest(
      () =>
        toChat({
          model: "m",
          input: "Go",
          tools: [{ type: "function", name: "f", parameters: null, strict: null, defer_loading: true }],
        }),
      "tools[0].defer_loading",
    );
    expectInvalidRequest(
      () => toChat({ model: "m", input: "Go", tool_choice: { type: "file_search" } }),
      "tool_choice.type",
    );
  });

  it("turns a json_schema text format into response_format", () => {
    const schema = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };
    const chat = toChat({
      model: "m",
      input: "Sum",
      text: {
        format: { type: "json_schema", name: "invoice", description: "A total", schema, strict: true },
        verbosity: "low",
      },
    });
    const expected: Partial<ChatCompletionCreateParams> = {
      response_format: {
        type: "json_schema",
        json_schema: { name: "invoice", description: "A total", schema, strict: true },
      },
      verbosity: "low",
    };
    expect(chat).toMatchObject(expected);
  });

  it("turns json_object into response_format and asks nothing for plain text", () => {
    expect(toChat({ model: "m", input: "x", text: { format: { type: "json_object" } } }).response_format).toEqual({
      type: "json_object",
    });
    expect(toChat({ model: "m", input: "x", text: { format: { type: "text" } } })).not.toHaveProperty(
      "response_format",
    );
  });

  it("renames max_output_tokens and reasoning.effort, passes the sampling and bookkeeping parameters, and drops the summary setting", () => {
    const chat = toChat({
      model: "m",
      input: "x",
      max_output_tokens: 300,
      reasoning: { effort: "low", summary: "auto" },
      temperature: 0.3,
      top_p: 0.9,
      parallel_tool_calls: false,
      user: "u-1",
      metadata: { team: "a" },
    });
    const expected: ChatCompletionCreateParams = {
      model: "m",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 300,
      reasoning_effort: "low",
      temperature: 0.3,
      top_p: 0.9,
      parallel_tool_calls: false,
      user: "u-1",
      metadata: { team: "a" },
    };
    expect(chat).toEqual(expected);
  });

  it("asks a stream for its usage", () => {
    expect(toChat({ model: "m", input: "x", stream: true })).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(toChat({ model: "m", input: "x", stream: false })).not.toHaveProperty("stream_options");
  });

  it("consumes the members without counterpart at values that ask nothing of the provider", () => {
    const chat = toChat({
      model: "m",
      input: "x",
      store: true,
      service_tier: "flex",
      safety_identifier: "user-hash",
      prompt_cache_key: "k",
      truncation: "disabled",
      include: [],
      background: false,
    });
    expect(chat).toEqual({ model: "m", messages: [{ role: "user", content: "x" }] });
  });

  it("treats a member set to null as absent", () => {
    expect(
      responsesToChat({ model: "m", input: "x", previous_response_id: null, conversation: null, prompt: null }),
    ).toEqual({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
  });

  it.each([
    ["previous_response_id", "resp_secret"],
    ["conversation", "conv_secret"],
    ["background", true],
    ["prompt", { id: "pmpt_secret" }],
    ["truncation", "auto"],
    ["include", ["message.output_text.logprobs"]],
    ["top_logprobs", 3],
    ["stream_options", { include_obfuscation: false }],
    ["prompt_cache_retention", "24h"],
    ["some_future_member", "secret-value"],
  ])("refuses '%s' naming it, before anything is sent", (name, value) => {
    const action = () => responsesToChat({ model: "m", input: "x", [name]: value });
    expectInvalidRequest(action, name, ["secret"]);
    expect(gatewayErrorOf(action).message).toMatch(
      new RegExp(`^'${name}' cannot be translated for a model routed to another provider.*; nothing was sent\\.$`),
    );
  });

  it("refuses text and reasoning members without a counterpart, naming them", () => {
    expectInvalidRequest(
      () => responsesToChat({ model: "m", input: "x", reasoning: { effort: "low", mode: "pro" } }),
      "reasoning.mode",
    );
    expectInvalidRequest(
      () => responsesToChat({ model: "m", input: "x", text: { format: { type: "grammar" } } }),
      "text.format.type",
    );
  });

  it("lists every member it carries or consumes, and accepts each", () => {
    expect(new Set([...carriedResponsesMembers, ...consumedResponsesMembers]).size).toBe(
      carriedResponsesMembers.length + consumedResponsesMembers.length,
    );
    const values: Record<string, unknown> = {
      model: "m",
      input: "x",
      instructions: "i",
      tools: [],
      tool_choice: "auto",
      text: {},
      reasoning: {},
      max_output_tokens: 1,
      temperature: 1,
      top_p: 1,
      parallel_tool_calls: true,
      user: "u",
      metadata: {},
      stream: false,
      store: false,
      service_tier: "auto",
      safety_identifier: "s",
      prompt_cache_key: "k",
      truncation: "disabled",
      include: [],
      background: false,
    };
    for (const name of [...carriedResponsesMembers, ...consumedResponsesMembers]) {
      expect(() => responsesToChat({ input: "x", [name]: values[name] }), name).not.toThrow();
    }
  });
});

/** A `chat.completion` as a provider's translation gives it. */
function completion(
  message: Partial<ChatCompletion.Choice["message"]>,
  finishReason: ChatCompletion.Choice["finish_reason"] = "stop",
): JsonObject {
  const value: ChatCompletion = {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: now - 5,
    model: "claude-sonnet-4",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: null, refusal: null, ...message },
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: 20,
      completion_tokens: 7,
      total_tokens: 27,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  };
  return { ...value };
}

describe("chatToResponse", () => {
  it("builds a completed response with a message item and the request's settings echoed", () => {
    const request = wire({ model: "claude", instructions: "Be terse.", input: "Hi" } satisfies ResponseCreateParams);
    const expected: WireResponse = {
      id,
      object: "response",
      created_at: now - 5,
      status: "completed",
      background: false,
      completed_at: now,
      error: null,
      incomplete_details: null,
      instructions: "Be terse.",
      max_output_tokens: null,
      max_tool_calls: null,
      model: "claude-sonnet-4",
      output: [
        {
          id: "msg_abc123",
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Hello!", annotations: [], logprobs: [] }],
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      service_tier: "default",
      store: true,
      temperature: 1,
      text: { format: { type: "text" } },
      tool_choice: "auto",
      tools: [],
      top_logprobs: 0,
      top_p: 1,
      truncation: "disabled",
      user: null,
      usage: {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
        output_tokens: 7,
        output_tokens_details: { reasoning_tokens: 2 },
        total_tokens: 27,
      },
      metadata: {},
    };
    const response = chatToResponse(completion({ content: "Hello!" }), request, id);
    expect(response).toEqual(expected);
    expect(response).not.toHaveProperty("output_text");
  });

  it("gives one function_call item per tool call, after the message, with ids made from the response's", () => {
    const response = chatToResponse(
      completion(
        {
          content: "Checking.",
          tool_calls: [
            { id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
            { id: "toolu_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
          ],
        },
        "tool_calls",
      ),
      { model: "m", input: "x" },
      id,
    );
    const expected: WireResponse["output"] = [
      {
        id: "msg_abc123",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Checking.", annotations: [], logprobs: [] }],
      },
      {
        type: "function_call",
        id: "fc_abc123_1",
        call_id: "toolu_1",
        name: "weather",
        arguments: '{"city":"Paris"}',
        status: "completed",
      },
      {
        type: "function_call",
        id: "fc_abc123_2",
        call_id: "toolu_2",
        name: "weather",
        arguments: '{"city":"Rome"}',
        status: "completed",
      },
    ];
    expect(response.output).toEqual(expected);
    expect(response.status).toBe("completed");
  });

  it("gives no message item when there is no text", () => {
    const response = chatToResponse(
      completion(
        { tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
        "tool_calls",
      ),
      { model: "m" },
      id,
    );
    expect(response.output).toEqual([
      { type: "function_call", id: "fc_abc123", call_id: "c", name: "f", arguments: "{}", status: "completed" },
    ]);
  });

  it("reports a length stop as incomplete for max_output_tokens, the cut item incomplete, and no completion time", () => {
    const response = chatToResponse(
      completion({ content: "Half an ans" }, "length"),
      { model: "m", max_output_tokens: 5 },
      id,
    );
    expect(response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      max_output_tokens: 5,
      output: [{ type: "message", status: "incomplete" }],
    });
    expect(response).not.toHaveProperty("completed_at");
  });

  it("reports a content filter stop as incomplete for content_filter", () => {
    const response = chatToResponse(completion({ content: "" }, "content_filter"), { model: "m" }, id);
    expect(response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "content_filter" },
      output: [],
    });
  });

  it("gives a refusal as a refusal part", () => {
    const response = chatToResponse(completion({ refusal: "I can't help with that." }), { model: "m" }, id);
    expect(response.output).toEqual([
      {
        id: "msg_abc123",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "refusal", refusal: "I can't help with that." }],
      },
    ]);
  });

  it("echoes the request's tools, tool choice, format, limits, sampling and metadata in the Responses shape", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const request = wire({
      model: "m",
      input: "x",
      tools: [
        { type: "function", name: "f", description: "d", parameters: schema, strict: true },
        { type: "function", name: "g", parameters: null, strict: null },
      ],
      tool_choice: { type: "function", name: "f" },
      parallel_tool_calls: false,
      temperature: 0.2,
      top_p: 0.5,
      text: { format: { type: "json_schema", name: "out", schema, strict: true }, verbosity: "high" },
      max_output_tokens: 100,
      metadata: { k: "v" },
      reasoning: { effort: "high", summary: "auto" },
      user: "u",
      store: true,
    } satisfies ResponseCreateParams);
    const expected: Partial<WireResponse> = {
      tools: [
        { type: "function", name: "f", description: "d", parameters: schema, strict: true },
        { type: "function", name: "g", description: null, parameters: null, strict: false },
      ],
      tool_choice: { type: "function", name: "f" },
      parallel_tool_calls: false,
      temperature: 0.2,
      top_p: 0.5,
      text: {
        format: { type: "json_schema", name: "out", schema, strict: true, description: null },
        verbosity: "high",
      },
      max_output_tokens: 100,
      metadata: { k: "v" },
      reasoning: { effort: "high", summary: null },
      user: "u",
      store: true,
    };
    expect(chatToResponse(completion({ content: "{}" }), request, id)).toMatchObject(expected);
  });

  it("takes the completion time from the clock it is given", () => {
    const clock = () => 1_800_000_000_500;
    expect(chatToResponse(completion({ content: "x" }), { model: "m" }, id, clock)).toMatchObject({
      created_at: now - 5,
      completed_at: 1_800_000_000,
    });
    const translator = chatStreamToResponses({ model: "m" }, id, now, clock);
    expect(translator.end().at(-1)).toMatchObject({ response: { created_at: now, completed_at: 1_800_000_000 } });
  });

  it("sends usage as null when the completion has none, as the API does", () => {
    const { usage: _usage, ...withoutUsage } = completion({ content: "x" });
    expect(chatToResponse(withoutUsage, { model: "m" }, id).usage).toBeNull();
  });
});

describe("a round trip through Chat Completions", () => {
  it("carries text, a json schema and tool calls from the request to the response", () => {
    const schema = {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    };
    const request = wire({
      model: "gemini-2.5-pro",
      instructions: "Answer in JSON.",
      input: [
        { role: "user", content: "Where is it warm?" },
        { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Rome"}' },
        { type: "function_call_output", call_id: "call_1", output: "30C" },
      ],
      tools: [{ type: "function", name: "weather", parameters: { type: "object" }, strict: false }],
      text: { format: { type: "json_schema", name: "place", schema, strict: true } },
    } satisfies ResponseCreateParams);
    const chat = responsesToChat(request);
    expect(chat).toMatchObject({
      messages: [
        { role: "system", content: "Answer in JSON." },
        { role: "user", content: "Where is it warm?" },
        { role: "assistant", tool_calls: [{ id: "call_1", function: { name: "weather" } }] },
        { role: "tool", tool_call_id: "call_1", content: "30C" },
      ],
      tools: [{ type: "function", function: { name: "weather", strict: false } }],
      response_format: { type: "json_schema", json_schema: { name: "place", schema, strict: true } },
    });
    // The provider answers the chat request: JSON text for the schema, and one more tool call.
    const answer = completion(
      {
        content: '{"city":"Rome"}',
        tool_calls: [{ id: "call_2", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
      },
      "tool_calls",
    );
    const response = chatToResponse(answer, request, id);
    expect(response).toMatchObject({
      status: "completed",
      instructions: "Answer in JSON.",
      text: { format: { type: "json_schema", name: "place", schema, strict: true } },
      output: [
        { type: "message", content: [{ type: "output_text", text: '{"city":"Rome"}' }] },
        { type: "function_call", call_id: "call_2", name: "weather", arguments: '{"city":"Oslo"}' },
      ],
    });
  });
});

/** A `chat.completion.chunk` with one delta, as a provider's stream translation gives it. */
function chunk(
  delta: ChatCompletionChunk.Choice.Delta,
  finishReason: ChatCompletionChunk.Choice["finish_reason"] = null,
): JsonObject {
  const value: ChatCompletionChunk = {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: now - 5,
    model: "claude-sonnet-4",
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  };
  return { ...value };
}

/** The closing chunk that carries usage. */
function usageChunk(): JsonObject {
  const value: ChatCompletionChunk = {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: now - 5,
    model: "claude-sonnet-4",
    choices: [],
    usage: {
      prompt_tokens: 20,
      completion_tokens: 7,
      total_tokens: 27,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  };
  return { ...value };
}

/** Every event of a chat stream's chunks, then its end, as the SDK types them. */
function streamEvents(request: JsonObject, chunks: JsonObject[]): ResponseStreamEvent[] {
  const translator = chatStreamToResponses(request, id, now - 5);
  const events = [...chunks.flatMap((each) => translator.chunk(each)), ...translator.end()];
  // The wire events are plain JSON; the assertions below check them against the SDK's shapes.
  return events as unknown as ResponseStreamEvent[];
}

function finalResponse(events: ResponseStreamEvent[]): unknown {
  const last = events.at(-1);
  return last?.type === "response.completed" || last?.type === "response.incomplete" ? last.response : undefined;
}

describe("chatStreamToResponses", () => {
  const request = wire({ model: "claude", input: "Hi", stream: true } satisfies ResponseCreateParams);

  it("streams text as the API does, numbering the events from 0", () => {
    const events = streamEvents(request, [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hel" }),
      chunk({ content: "lo" }),
      chunk({}, "stop"),
      usageChunk(),
    ]);
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
  });

  it("gives each event the SDK's shape", () => {
    const events = streamEvents(request, [chunk({ content: "Hi" }), chunk({}, "stop")]);
    const at = { item_id: "msg_abc123", output_index: 0, content_index: 0 };
    const expected: ResponseStreamEvent[] = [
      {
        type: "response.output_item.added",
        sequence_number: 2,
        output_index: 0,
        item: { id: "msg_abc123", type: "message", status: "in_progress", role: "assistant", content: [] },
      },
      {
        type: "response.content_part.added",
        sequence_number: 3,
        ...at,
        part: { type: "output_text", text: "", annotations: [], logprobs: [] },
      },
      { type: "response.output_text.delta", sequence_number: 4, ...at, delta: "Hi", logprobs: [] },
      { type: "response.output_text.done", sequence_number: 5, ...at, text: "Hi", logprobs: [] },
      {
        type: "response.content_part.done",
        sequence_number: 6,
        ...at,
        part: { type: "output_text", text: "Hi", annotations: [], logprobs: [] },
      },
      {
        type: "response.output_item.done",
        sequence_number: 7,
        output_index: 0,
        item: {
          id: "msg_abc123",
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Hi", annotations: [], logprobs: [] }],
        },
      },
    ];
    expect(events.slice(2, -1)).toEqual(expected);
    expect(events[0]).toMatchObject({
      type: "response.created",
      response: { id, status: "in_progress", output: [], model: "claude-sonnet-4" },
    });
    expect(events[0]).toHaveProperty("response.usage", null);
    expect(events[1]).toMatchObject({ type: "response.in_progress", response: { status: "in_progress" } });
  });

  it("streams deltas that add up to the final output text", () => {
    const pieces = ["The ", "answer ", "is ", "42", "."];
    const events = streamEvents(request, [...pieces.map((content) => chunk({ content })), chunk({}, "stop")]);
    const deltas = events.filter(
      (event): event is ResponseTextDeltaEvent => event.type === "response.output_text.delta",
    );
    const final = finalResponse(events) as WireResponse;
    const message = final.output[0];
    const text =
      message?.type === "message" && message.content[0]?.type === "output_text" ? message.content[0].text : "";
    expect(deltas.map((event) => event.delta).join("")).toBe(text);
    expect(text).toBe("The answer is 42.");
  });

  it("streams tool calls as function_call items, one closed before the next opens", () => {
    const events = streamEvents(request, [
      chunk({ content: "Checking." }),
      chunk({
        tool_calls: [{ index: 0, id: "toolu_1", type: "function", function: { name: "weather", arguments: "" } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({
        tool_calls: [{ index: 1, id: "toolu_2", type: "function", function: { name: "time", arguments: "{}" } }],
      }),
      chunk({}, "tool_calls"),
    ]);
    expect(events.map((event) => event.type).slice(2)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const expected: ResponseStreamEvent[] = [
      {
        type: "response.output_item.added",
        sequence_number: 8,
        output_index: 1,
        item: {
          type: "function_call",
          id: "fc_abc123_1",
          call_id: "toolu_1",
          name: "weather",
          arguments: "",
          status: "in_progress",
        },
      },
      {
        type: "response.function_call_arguments.delta",
        sequence_number: 9,
        item_id: "fc_abc123_1",
        output_index: 1,
        delta: '{"city":',
      },
      {
        type: "response.function_call_arguments.delta",
        sequence_number: 10,
        item_id: "fc_abc123_1",
        output_index: 1,
        delta: '"Paris"}',
      },
      {
        type: "response.function_call_arguments.done",
        sequence_number: 11,
        item_id: "fc_abc123_1",
        output_index: 1,
        name: "weather",
        arguments: '{"city":"Paris"}',
      },
      {
        type: "response.output_item.done",
        sequence_number: 12,
        output_index: 1,
        item: {
          type: "function_call",
          id: "fc_abc123_1",
          call_id: "toolu_1",
          name: "weather",
          arguments: '{"city":"Paris"}',
          status: "completed",
        },
      },
    ];
    expect(events.slice(8, 13)).toEqual(expected);
  });

  it("ends with the response chatToResponse gives for the equivalent whole completion", () => {
    const toolRequest = wire({
      model: "claude",
      input: "Hi",
      stream: true,
      tools: [{ type: "function", name: "weather", parameters: { type: "object" }, strict: true }],
      text: { format: { type: "json_schema", name: "x", schema: { type: "object" } } },
    } satisfies ResponseCreateParams);
    const events = streamEvents(toolRequest, [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Check" }),
      chunk({ content: "ing." }),
      chunk({
        tool_calls: [
          { index: 0, id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city"' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':"Paris"}' } }] }),
      chunk({
        tool_calls: [
          { index: 1, id: "toolu_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      }),
      chunk({}, "tool_calls"),
      usageChunk(),
    ]);
    const whole = completion(
      {
        content: "Checking.",
        tool_calls: [
          { id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
          { id: "toolu_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      "tool_calls",
    );
    expect(events.at(-1)?.type).toBe("response.completed");
    expect(finalResponse(events)).toEqual(chatToResponse(whole, toolRequest, id));
  });

  it("ends a stream cut by the length limit with response.incomplete and the last item incomplete", () => {
    const events = streamEvents(request, [chunk({ content: "Half" }), chunk({}, "length"), usageChunk()]);
    expect(events.at(-2)).toMatchObject({ type: "response.output_item.done", item: { status: "incomplete" } });
    expect(events.at(-1)).toMatchObject({
      type: "response.incomplete",
      response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } },
    });
    expect(finalResponse(events)).toEqual(chatToResponse(completion({ content: "Half" }, "length"), request, id));
  });

  it("streams a refusal as a refusal part", () => {
    const events = streamEvents(request, [
      chunk({ refusal: "I can't " }),
      chunk({ refusal: "help." }),
      chunk({}, "stop"),
    ]);
    expect(events.map((event) => event.type).slice(2, -1)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.refusal.delta",
      "response.refusal.delta",
      "response.refusal.done",
      "response.content_part.done",
      "response.output_item.done",
    ]);
    expect(events.find((event) => event.type === "response.refusal.done")).toMatchObject({ refusal: "I can't help." });
  });

  it("opens a new message item for text that follows a tool call", () => {
    const events = streamEvents(request, [
      chunk({ tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }),
      chunk({ content: "After." }),
      chunk({}, "stop"),
    ]);
    const final = finalResponse(events) as WireResponse;
    expect(final.output.map((item) => [item.type, "id" in item ? item.id : undefined])).toEqual([
      ["function_call", "fc_abc123"],
      ["message", "msg_abc123_1"],
    ]);
  });

  it("opens and completes an empty response when the chat stream had no content", () => {
    const events = streamEvents(request, []);
    expect(events.map((event) => [event.type, event.sequence_number])).toEqual([
      ["response.created", 0],
      ["response.in_progress", 1],
      ["response.completed", 2],
    ]);
    expect(finalResponse(events)).toMatchObject({ status: "completed", output: [], model: "claude" });
  });

  it("throws when the chat stream returns to a tool call it had left, which no translation should do", () => {
    const translator = chatStreamToResponses(request, id, now);
    translator.chunk(
      chunk({ tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "f", arguments: "" } }] }),
    );
    translator.chunk(
      chunk({ tool_calls: [{ index: 1, id: "b", type: "function", function: { name: "g", arguments: "" } }] }),
    );
    expect(() => translator.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }))).toThrow(
      /tool call 0/,
    );
  });
});

/** The openai SDK, answering from `body` as the gateway would (no socket). */
function sdkAnswering(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://gateway.test/v1",
    maxRetries: 0,
    fetch: async () => new globalThis.Response(body, { headers: { "content-type": contentType } }),
  });
}

describe("the openai SDK reading the translated answers", () => {
  const request: ResponseCreateParams = { model: "claude", input: "Hi" };

  it("reads a translated response and derives its output_text", async () => {
    const body = JSON.stringify(chatToResponse(completion({ content: "Hello!" }), wire(request), id));
    const response = await sdkAnswering(body, "application/json").responses.create({ model: "claude", input: "Hi" });
    expect(response.output_text).toBe("Hello!");
    expect(response.usage?.input_tokens).toBe(20);
  });

  it("accumulates the translated stream into the final response, as the SDK's stream helper checks it", async () => {
    const events = streamEvents(wire(request), [
      chunk({ content: "Hel" }),
      chunk({ content: "lo." }),
      chunk({
        tool_calls: [{ index: 0, id: "toolu_1", type: "function", function: { name: "f", arguments: '{"a"' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }),
      chunk({}, "tool_calls"),
      usageChunk(),
    ]);
    const sse = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
    const stream = sdkAnswering(sse, "text/event-stream").responses.stream({ model: "claude", input: "Hi" });
    const seen: string[] = [];
    stream.on("event", (event) => seen.push(event.type));
    const final = await stream.finalResponse();
    expect(seen).toEqual(events.map((event) => event.type));
    expect(final.output_text).toBe("Hello.");
    // The SDK adds its parsed members (`parsed`, `parsed_arguments`) to what it read.
    expect(final.output).toMatchObject((finalResponse(events) as WireResponse).output);
  });
});
