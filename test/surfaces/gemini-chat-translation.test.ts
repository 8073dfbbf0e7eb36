import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams,
  ChatCompletionToolChoiceOption,
} from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/json/json-object.js";
import { geminiChatTranslation, geminiThinkingBudgets } from "../../src/surfaces/gemini/openai-chat-translation.js";
import { simulateGenerateContent } from "../../src/surfaces/gemini/simulated/generate.js";
import { type ReasoningLevel, reasoningLevels, type TranslationContext } from "../../src/surfaces/translation.js";
import { expectInvalidRequest, gatewayErrorOf, wire } from "./gateway-error-of.js";

const context: TranslationContext = {
  upstreamModel: "gemini-2.5-flash",
  publicModel: "gpt-4o-mini",
  reasoning: undefined,
  droppable: [],
  id: "chatcmpl-abc123",
  created: 1_750_000_000,
};

/** The Gemini request for a Chat Completions body (taken through JSON text, as it travels). */
function translate(body: ChatCompletionCreateParams, overrides: Partial<TranslationContext> = {}) {
  return geminiChatTranslation.request(wire(body), { ...context, ...overrides });
}

/** The Gemini body for a body that is not a typed SDK params object (extra or legacy members). */
function translateRaw(body: object, overrides: Partial<TranslationContext> = {}) {
  return geminiChatTranslation.request(wire(body), { ...context, ...overrides });
}

function nativeBody(body: ChatCompletionCreateParams, overrides: Partial<TranslationContext> = {}): JsonObject {
  return translate(body, overrides).body;
}

const user = (content: string) => ({ role: "user" as const, content });

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: {
      type: "object",
      properties: { city: { type: "string", minLength: 1 } },
      required: ["city"],
      additionalProperties: false,
    },
    strict: true,
  },
};

describe("geminiChatTranslation.request: route", () => {
  it("calls generateContent for the upstream model, escaped as a path segment", () => {
    expect(translate({ model: "gpt-4o-mini", messages: [user("Hi")] }).path).toBe(
      "/v1beta/models/gemini-2.5-flash:generateContent",
    );
    expect(translate({ model: "m", messages: [user("Hi")] }, { upstreamModel: "tuned/a b" }).path).toBe(
      "/v1beta/models/tuned%2Fa%20b:generateContent",
    );
  });

  it("calls streamGenerateContent with alt=sse for a streamed call", () => {
    const request = translate({
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [user("Hi")],
    });
    expect(request.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(request.body).toEqual({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
  });
});

describe("geminiChatTranslation.request: messages", () => {
  it("puts system and developer messages, in order, into systemInstruction; user and assistant become user and model", () => {
    const body = nativeBody({
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "developer", content: [{ type: "text", text: "Cite ids." }] },
        user("Hello"),
        { role: "assistant", content: "Hi there." },
        user("Bye"),
      ],
    });
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: "Be brief." }, { text: "Cite ids." }] },
      contents: [
        { role: "user", parts: [{ text: "Hello" }] },
        { role: "model", parts: [{ text: "Hi there." }] },
        { role: "user", parts: [{ text: "Bye" }] },
      ],
    });
  });

  it("merges consecutive turns of one role into one content and leaves empty text out", () => {
    const body = nativeBody({
      model: "m",
      messages: [user("One"), user(""), { role: "user", content: [{ type: "text", text: "Two" }] }],
    });
    expect(body.contents).toEqual([{ role: "user", parts: [{ text: "One" }, { text: "Two" }] }]);
  });

  it("translates image, audio and file parts to inlineData and fileData", () => {
    const body = nativeBody({
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Compare these." },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.JPG?size=large" } },
            { type: "image_url", image_url: { url: "https://example.com/render?id=7" } },
            { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
            { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
            { type: "file", file: { file_data: "JVBERi0=", filename: "invoice.pdf" } },
            { type: "file", file: { file_data: "data:text/plain,h%C3%A9llo" } },
          ],
        },
      ],
    });
    expect(body.contents).toEqual([
      {
        role: "user",
        parts: [
          { text: "Compare these." },
          { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
          { fileData: { fileUri: "https://example.com/cat.JPG?size=large", mimeType: "image/jpeg" } },
          { fileData: { fileUri: "https://example.com/render?id=7" } },
          { inlineData: { mimeType: "audio/wav", data: "UklGRg==" } },
          { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
          { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
          { inlineData: { mimeType: "text/plain", data: btoa("h\u00c3\u00a9llo") } },
        ],
      },
    ]);
  });

  it("refuses a file id, which Gemini cannot read, naming it", () => {
    expectInvalidRequest(
      () =>
        translate({
          model: "m",
          messages: [
            user("x"),
            {
              role: "user",
              content: [
                { type: "text", text: "Read" },
                { type: "file", file: { file_id: "file-secret42" } },
              ],
            },
          ],
        }),
      "messages[1].content[1].file.file_id",
      ["file-secret42"],
    );
  });

  it("refuses inline file data whose media type nothing names", () => {
    expectInvalidRequest(
      () =>
        translate({
          model: "m",
          messages: [{ role: "user", content: [{ type: "file", file: { file_data: "QUJD" } }] }],
        }),
      "messages[0].content[0].file.file_data",
    );
    expectInvalidRequest(
      () =>
        translate({
          model: "m",
          messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:;base64,QUJD" } }] }],
        }),
      "messages[0].content[0].image_url.url",
    );
  });

  it("refuses a part type the role cannot carry", () => {
    expectInvalidRequest(
      () =>
        translateRaw({
          model: "m",
          messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }],
        }),
      "messages[0].content[0].type",
    );
    expectInvalidRequest(
      () => translateRaw({ model: "m", messages: [{ role: "user", content: [{ type: "video", video: {} }] }] }),
      "messages[0].content[0].type",
    );
  });

  it("refuses an unknown role, even one named like an Object member", () => {
    for (const role of ["robot", "constructor", "__proto__"]) {
      expectInvalidRequest(() => translateRaw({ model: "m", messages: [{ role, content: "x" }] }), "messages[0].role");
    }
  });

  it("reads no media type from an extension named like an Object member", () => {
    const body = nativeBody({
      model: "m",
      messages: [
        { role: "user", content: [{ type: "image_url", image_url: { url: "https://x.test/a.constructor" } }] },
      ],
    });
    expect(body.contents).toEqual([
      { role: "user", parts: [{ fileData: { fileUri: "https://x.test/a.constructor" } }] },
    ]);
  });

  it("refuses the legacy function role and function_call", () => {
    expectInvalidRequest(
      () => translateRaw({ model: "m", messages: [user("x"), { role: "function", name: "f", content: "1" }] }),
      "messages[1].role",
    );
    expectInvalidRequest(
      () =>
        translateRaw({
          model: "m",
          messages: [user("x"), { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }],
        }),
      "messages[1].function_call",
    );
  });

  it("refuses a message name unless 'name' is droppable, then drops it", () => {
    const body = { model: "m", messages: [{ role: "user" as const, content: "Hi", name: "alice" }] };
    expectInvalidRequest(() => translate(body), "messages[0].name", ["alice"]);
    expect(gatewayErrorOf(() => translate(body)).message).toMatch(/droppable/);
    expect(translate(body, { droppable: ["name"] }).body).toEqual({
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
    });
  });

  it("keeps an assistant refusal as the model's text", () => {
    const body = nativeBody({
      model: "m",
      messages: [user("x"), { role: "assistant", content: [{ type: "refusal", refusal: "I can't." }] }],
    });
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "x" }] },
      { role: "model", parts: [{ text: "I can't." }] },
    ]);
  });
});

describe("geminiChatTranslation.request: tool round trip", () => {
  const roundTrip: ChatCompletionCreateParams = {
    model: "m",
    tools: [weatherTool],
    messages: [
      user("Weather in Oslo and Rome?"),
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"celsius":4}' },
      { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "sunny, 21" }] },
    ],
  };

  it("sends tool calls as functionCall parts and tool messages as one user turn of functionResponse parts", () => {
    expect(nativeBody(roundTrip).contents).toEqual([
      { role: "user", parts: [{ text: "Weather in Oslo and Rome?" }] },
      {
        role: "model",
        parts: [
          { text: "Checking." },
          {
            functionCall: { name: "get_weather", args: { city: "Oslo" } },
            thoughtSignature: "skip_thought_signature_validator",
          },
          { functionCall: { name: "get_weather", args: { city: "Rome" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { celsius: 4 } } },
          { functionResponse: { name: "get_weather", response: { content: "sunny, 21" } } },
        ],
      },
    ]);
  });

  it("answers a call made by a previous answer by its id", () => {
    const answer = geminiChatTranslation.answer(
      {
        candidates: [
          {
            content: { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }] },
            finishReason: "STOP",
          },
        ],
      },
      context,
    ) as unknown as ChatCompletion;
    const call = answer.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error("expected a function tool call");
    const body = nativeBody({
      model: "m",
      messages: [
        user("Oslo?"),
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "cold" },
      ],
    });
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "Oslo?" }] },
      {
        role: "model",
        parts: [
          {
            functionCall: { name: "get_weather", args: { city: "Oslo" } },
            thoughtSignature: "skip_thought_signature_validator",
          },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { content: "cold" } } }] },
    ]);
  });

  it("takes empty arguments as no arguments", () => {
    const body = nativeBody({
      model: "m",
      messages: [
        user("x"),
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "now", arguments: "" } }] },
      ],
    });
    expect(body.contents).toContainEqual({
      role: "model",
      parts: [{ functionCall: { name: "now", args: {} }, thoughtSignature: "skip_thought_signature_validator" }],
    });
  });

  it("refuses arguments that are not a JSON object, naming them", () => {
    for (const args of ['{"city":', "[1]"]) {
      expectInvalidRequest(
        () =>
          translate({
            model: "m",
            messages: [
              user("x"),
              {
                role: "assistant",
                tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }],
              },
            ],
          }),
        "messages[1].tool_calls[0].function.arguments",
      );
    }
  });

  it("refuses a tool message that answers no earlier tool call", () => {
    expectInvalidRequest(
      () => translate({ model: "m", messages: [user("x"), { role: "tool", tool_call_id: "call_nope", content: "1" }] }),
      "messages[1].tool_call_id",
      ["call_nope"],
    );
  });
});

describe("geminiChatTranslation.request: tools", () => {
  it("declares function tools with their whole schema as parametersJsonSchema", () => {
    const body = nativeBody({
      model: "m",
      messages: [user("x")],
      tools: [weatherTool, { type: "function", function: { name: "now" } }],
    });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: "get_weather",
            description: "The weather in a city.",
            parametersJsonSchema: weatherTool.function.parameters,
          },
          { name: "now" },
        ],
      },
    ]);
    expect(body.toolConfig).toBeUndefined();
  });

  it("refuses a tool that is not a function, naming its type", () => {
    expectInvalidRequest(
      () =>
        translate({
          model: "m",
          messages: [user("x")],
          tools: [weatherTool, { type: "custom", custom: { name: "sql" } }],
        }),
      "tools[1].type",
    );
  });

  const toolChoices: [ChatCompletionToolChoiceOption, JsonObject][] = [
    ["auto", { mode: "AUTO" }],
    ["none", { mode: "NONE" }],
    ["required", { mode: "ANY" }],
    [
      { type: "function", function: { name: "get_weather" } },
      { mode: "ANY", allowedFunctionNames: ["get_weather"] },
    ],
    [
      {
        type: "allowed_tools",
        allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "get_weather" } }] },
      },
      { mode: "ANY", allowedFunctionNames: ["get_weather"] },
    ],
  ];

  it.each(toolChoices)("maps tool_choice %j to functionCallingConfig %j", (toolChoice, config) => {
    const body = nativeBody({ model: "m", messages: [user("x")], tools: [weatherTool], tool_choice: toolChoice });
    expect(body.toolConfig).toEqual({ functionCallingConfig: config });
  });

  it("keeps only the allowed tools of an allowed_tools choice in mode auto", () => {
    const body = nativeBody({
      model: "m",
      messages: [user("x")],
      tools: [weatherTool, { type: "function", function: { name: "now" } }],
      tool_choice: {
        type: "allowed_tools",
        allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "now" } }] },
      },
    });
    expect(body.tools).toEqual([{ functionDeclarations: [{ name: "now" }] }]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } });
  });

  it("refuses a tool choice string it does not know", () => {
    expectInvalidRequest(
      () => translateRaw({ model: "m", messages: [user("x")], tools: [weatherTool], tool_choice: "constructor" }),
      "tool_choice",
    );
  });

  it("refuses a custom tool choice", () => {
    expectInvalidRequest(
      () =>
        translate({
          model: "m",
          messages: [user("x")],
          tools: [weatherTool],
          tool_choice: { type: "custom", custom: { name: "sql" } },
        }),
      "tool_choice.type",
    );
  });
});

describe("geminiChatTranslation.request: generation parameters", () => {
  const schema = {
    type: "object",
    properties: { total: { type: "number" } },
    required: ["total"],
    additionalProperties: false,
  };

  it("sends a json_schema response format's full schema as responseJsonSchema", () => {
    const body = nativeBody({
      model: "m",
      messages: [user("x")],
      response_format: { type: "json_schema", json_schema: { name: "invoice", strict: true, schema } },
    });
    expect(body.generationConfig).toEqual({ responseMimeType: "application/json", responseJsonSchema: schema });
  });

  it("sends json_object as the JSON media type only, and text as nothing", () => {
    expect(
      nativeBody({ model: "m", messages: [user("x")], response_format: { type: "json_object" } }).generationConfig,
    ).toEqual({
      responseMimeType: "application/json",
    });
    expect(
      nativeBody({ model: "m", messages: [user("x")], response_format: { type: "text" } }).generationConfig,
    ).toBeUndefined();
  });

  it("maps sampling, length, stop, count, seed, penalty and logprob parameters", () => {
    const body = nativeBody({
      model: "m",
      messages: [user("x")],
      max_completion_tokens: 300,
      max_tokens: 999,
      temperature: 0.3,
      top_p: 0.9,
      stop: ["END", "STOP"],
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logprobs: true,
      top_logprobs: 3,
    });
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 300,
      temperature: 0.3,
      topP: 0.9,
      stopSequences: ["END", "STOP"],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      responseLogprobs: true,
      logprobs: 3,
    });
  });

  it("takes max_tokens and a single stop string", () => {
    expect(nativeBody({ model: "m", messages: [user("x")], max_tokens: 50, stop: "END" }).generationConfig).toEqual({
      maxOutputTokens: 50,
      stopSequences: ["END"],
    });
  });

  it.each(reasoningLevels.map((level) => [level, geminiThinkingBudgets[level]] as const))(
    "sends reasoning %s as thinkingBudget %d and consumes reasoning_effort",
    (level: ReasoningLevel, budget) => {
      const body = nativeBody({ model: "m", messages: [user("x")], reasoning_effort: "low" }, { reasoning: level });
      expect(body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: budget } });
    },
  );

  it("uses the one budget table", () => {
    expect(geminiThinkingBudgets).toEqual({ none: 0, low: 1024, medium: 8192, high: 16384, xhigh: 24576, max: 32768 });
  });
});

describe("geminiChatTranslation.request: members without a counterpart", () => {
  it("consumes members that do not change the answer", () => {
    const body = nativeBody({
      model: "m",
      messages: [user("x")],
      stream: false,
      stream_options: null,
      user: "u-1",
      metadata: { team: "a" },
      store: false,
      safety_identifier: "s",
      prompt_cache_key: "k",
      service_tier: "auto",
      parallel_tool_calls: true,
      reasoning_effort: "medium",
    });
    expect(body).toEqual({ contents: [{ role: "user", parts: [{ text: "x" }] }] });
  });

  const refused: [string, unknown][] = [
    ["logit_bias", { "50256": -100 }],
    ["audio", { voice: "alloy", format: "mp3" }],
    ["modalities", ["text", "audio"]],
    ["prediction", { type: "content", content: "x" }],
    ["web_search_options", {}],
    ["functions", [{ name: "f" }]],
    ["function_call", "auto"],
    ["verbosity", "low"],
    ["not_a_parameter", 1],
  ];

  it.each(refused)("refuses %s, naming it and the way out", (name, value) => {
    const body = { model: "m", messages: [user("x")], [name]: value };
    expectInvalidRequest(() => translateRaw(body), name);
    const { message } = gatewayErrorOf(() => translateRaw(body));
    expect(message).toContain(`'${name}' has no counterpart in the Gemini API`);
    expect(message).toMatch(/remove it, or list .* droppable parameters .*Nothing was sent\./);
  });

  it.each(refused)("drops %s when the policy lists it as droppable", (name, value) => {
    const body = translateRaw({ model: "m", messages: [user("x")], [name]: value }, { droppable: [name] }).body;
    expect(body).toEqual({ contents: [{ role: "user", parts: [{ text: "x" }] }] });
  });

  it("takes a null member as absent", () => {
    expect(translateRaw({ model: "m", messages: [user("x")], logit_bias: null }).body).toEqual({
      contents: [{ role: "user", parts: [{ text: "x" }] }],
    });
  });
});

describe("geminiChatTranslation.answer", () => {
  it("answers with the joined non-thought text, finish reason and usage", () => {
    const completion: ChatCompletion = {
      id: "chatcmpl-abc123",
      object: "chat.completion",
      created: 1_750_000_000,
      model: "gpt-4o-mini",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hello, world.", refusal: null },
          finish_reason: "stop",
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 9,
        total_tokens: 21,
        completion_tokens_details: { reasoning_tokens: 5 },
      },
    };
    const answer = geminiChatTranslation.answer(
      {
        candidates: [
          {
            content: {
              role: "model",
              parts: [
                { text: "Let me think.", thought: true },
                { text: "Hello, " },
                { text: "world.", thoughtSignature: "c2ln" },
              ],
            },
            finishReason: "STOP",
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 4, thoughtsTokenCount: 5, totalTokenCount: 21 },
        modelVersion: "gemini-2.5-flash",
      },
      context,
    );
    expect(answer).toEqual(completion);
  });

  it("answers function calls as tool calls with deterministic ids, finishing with tool_calls", () => {
    const native = {
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "c2ln" },
              { functionCall: { name: "get_weather", args: { city: "Rome" } } },
            ],
          },
          finishReason: "STOP",
        },
      ],
      usageMetadata: {
        promptTokenCount: 30,
        candidatesTokenCount: 10,
        totalTokenCount: 40,
        cachedContentTokenCount: 8,
      },
    };
    const expected: ChatCompletion = {
      id: "chatcmpl-abc123",
      object: "chat.completion",
      created: 1_750_000_000,
      model: "gpt-4o-mini",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            refusal: null,
            tool_calls: [
              {
                id: "call_abc123_0_0",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
              },
              {
                id: "call_abc123_0_1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Rome"}' },
              },
            ],
          },
          finish_reason: "tool_calls",
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 30,
        completion_tokens: 10,
        total_tokens: 40,
        prompt_tokens_details: { cached_tokens: 8 },
      },
    };
    expect(geminiChatTranslation.answer(native, context)).toEqual(expected);
    expect(geminiChatTranslation.answer(native, context)).toEqual(geminiChatTranslation.answer(native, context));
  });

  it.each([
    ["STOP", "stop"],
    ["MAX_TOKENS", "length"],
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["BLOCKLIST", "content_filter"],
    ["PROHIBITED_CONTENT", "content_filter"],
    ["SPII", "content_filter"],
    ["OTHER", "stop"],
    ["MALFORMED_FUNCTION_CALL", "stop"],
    ["LANGUAGE", "stop"],
  ])("maps finishReason %s to %s", (reason, finish) => {
    const answer = geminiChatTranslation.answer(
      { candidates: [{ content: { role: "model", parts: [{ text: "x" }] }, finishReason: reason }] },
      context,
    ) as unknown as ChatCompletion;
    expect(answer.choices[0]?.finish_reason).toBe(finish);
  });

  it("answers a candidate withheld by a filter with null content", () => {
    const answer = geminiChatTranslation.answer({ candidates: [{ finishReason: "SAFETY", index: 0 }] }, context);
    const expected: ChatCompletion["choices"] = [
      {
        index: 0,
        message: { role: "assistant", content: null, refusal: null },
        finish_reason: "content_filter",
        logprobs: null,
      },
    ];
    expect(answer.choices).toEqual(expected);
  });

  it("answers a blocked prompt with one content_filter choice", () => {
    const answer = geminiChatTranslation.answer(
      {
        promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
        usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 },
      },
      context,
    );
    const expected: ChatCompletion = {
      id: "chatcmpl-abc123",
      object: "chat.completion",
      created: 1_750_000_000,
      model: "gpt-4o-mini",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: null, refusal: null },
          finish_reason: "content_filter",
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 },
    };
    expect(answer).toEqual(expected);
  });

  it("answers one choice per candidate, indexed by the candidate", () => {
    const answer = geminiChatTranslation.answer(
      {
        candidates: [
          { content: { role: "model", parts: [{ text: "A" }] }, finishReason: "STOP", index: 0 },
          { content: { role: "model", parts: [{ text: "B" }] }, finishReason: "MAX_TOKENS", index: 1 },
        ],
      },
      context,
    ) as unknown as ChatCompletion;
    expect(answer.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, "A", "stop"],
      [1, "B", "length"],
    ]);
    expect(answer.usage).toBeUndefined();
  });

  it("translates logprobsResult into logprobs", () => {
    const answer = geminiChatTranslation.answer(
      {
        candidates: [
          {
            content: { role: "model", parts: [{ text: "Hi" }] },
            finishReason: "STOP",
            logprobsResult: {
              chosenCandidates: [{ token: "Hi", logProbability: -0.1 }],
              topCandidates: [
                {
                  candidates: [
                    { token: "Hi", logProbability: -0.1 },
                    { token: "Hey", logProbability: -2.5 },
                  ],
                },
              ],
            },
          },
        ],
      },
      context,
    );
    const expected: ChatCompletion.Choice["logprobs"] = {
      content: [
        {
          token: "Hi",
          bytes: [72, 105],
          logprob: -0.1,
          top_logprobs: [
            { token: "Hi", bytes: [72, 105], logprob: -0.1 },
            { token: "Hey", bytes: [72, 101, 121], logprob: -2.5 },
          ],
        },
      ],
      refusal: null,
    };
    expect((answer as unknown as ChatCompletion).choices[0]?.logprobs).toEqual(expected);
  });
});

/** The events of a simulated Gemini SSE answer, parsed. */
async function simulatedEvents(body: JsonObject): Promise<JsonObject[]> {
  const text = await simulateGenerateContent({ body, digest: "d".repeat(64) }, "gemini-2.5-flash", "sse").text();
  return text
    .split("\r\n\r\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => JSON.parse(frame.slice("data: ".length)) as JsonObject);
}

async function simulatedWhole(body: JsonObject): Promise<JsonObject> {
  return (await simulateGenerateContent(
    { body, digest: "d".repeat(64) },
    "gemini-2.5-flash",
    "none",
  ).json()) as JsonObject;
}

/** All chunks a translator gives for the events, `end()` included. */
function streamChunks(body: ChatCompletionCreateParams, events: JsonObject[]): ChatCompletionChunk[] {
  const translator = geminiChatTranslation.stream(wire(body), context);
  const chunks = [...events.flatMap((event) => translator.event(event)), ...translator.end()];
  return chunks as unknown as ChatCompletionChunk[];
}

describe("geminiChatTranslation.stream", () => {
  const chatBody: ChatCompletionCreateParams = {
    model: "gpt-4o-mini",
    stream: true,
    messages: [user("Tell me about tides, please.")],
  };

  it("streams chunks whose text is the whole answer's, opening with the role and closing with the finish reason", async () => {
    const request = translate(chatBody);
    const events = await simulatedEvents(request.body);
    expect(events.length).toBeGreaterThan(2);
    const chunks = streamChunks(chatBody, events);
    const whole = geminiChatTranslation.answer(
      await simulatedWhole(request.body),
      context,
    ) as unknown as ChatCompletion;

    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe(whole.choices[0]?.message.content);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.at(-1)?.choices).toEqual([{ index: 0, delta: {}, finish_reason: "stop", logprobs: null }]);
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason !== null)).toHaveLength(1);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: "chatcmpl-abc123",
        object: "chat.completion.chunk",
        created: 1_750_000_000,
        model: "gpt-4o-mini",
      });
      expect(chunk.usage).toBeUndefined();
    }
  });

  it("adds a usage chunk from the last usageMetadata when include_usage is set", async () => {
    const body = { ...chatBody, stream_options: { include_usage: true } };
    const events = await simulatedEvents(translate(body).body);
    const chunks = streamChunks(body, events);
    const last = events.at(-1)?.usageMetadata as {
      promptTokenCount: number;
      candidatesTokenCount: number;
      totalTokenCount: number;
    };
    const usageChunk: ChatCompletionChunk = {
      id: "chatcmpl-abc123",
      object: "chat.completion.chunk",
      created: 1_750_000_000,
      model: "gpt-4o-mini",
      choices: [],
      usage: {
        prompt_tokens: last.promptTokenCount,
        completion_tokens: last.candidatesTokenCount,
        total_tokens: last.totalTokenCount,
      },
    };
    expect(chunks.at(-1)).toEqual(usageChunk);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).toBeNull();
  });

  it("streams function calls whole, each with its index and id, and finishes with tool_calls", () => {
    const events: JsonObject[] = [
      { candidates: [{ content: { role: "model", parts: [{ text: "Let me check. " }] }, index: 0 }] },
      { candidates: [{ content: { role: "model", parts: [{ text: "hidden", thought: true }] }, index: 0 }] },
      {
        candidates: [
          {
            content: {
              role: "model",
              parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "c2ln" }],
            },
            index: 0,
          },
        ],
      },
      {
        candidates: [
          {
            content: { role: "model", parts: [{ functionCall: { name: "now", args: {} } }] },
            finishReason: "STOP",
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 6, thoughtsTokenCount: 2, totalTokenCount: 18 },
      },
    ];
    const chunk = (
      delta: ChatCompletionChunk.Choice.Delta,
      finish: ChatCompletionChunk.Choice["finish_reason"] = null,
    ): ChatCompletionChunk => ({
      id: "chatcmpl-abc123",
      object: "chat.completion.chunk",
      created: 1_750_000_000,
      model: "gpt-4o-mini",
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
    const expected: ChatCompletionChunk[] = [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Let me check. " }),
      chunk({
        tool_calls: [
          {
            index: 0,
            id: "call_abc123_0_0",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
          },
        ],
      }),
      chunk({
        tool_calls: [{ index: 1, id: "call_abc123_0_1", type: "function", function: { name: "now", arguments: "{}" } }],
      }),
      chunk({}, "tool_calls"),
    ];
    expect(streamChunks({ ...chatBody, tools: [weatherTool] }, events)).toEqual(expected);
  });

  it("gives the same tool call ids as the whole answer", () => {
    const candidate = {
      content: { role: "model", parts: [{ functionCall: { name: "now", args: {} } }] },
      finishReason: "STOP",
      index: 0,
    };
    const whole = geminiChatTranslation.answer({ candidates: [candidate] }, context) as unknown as ChatCompletion;
    const streamed = streamChunks(chatBody, [{ candidates: [candidate] }]);
    const streamedId = streamed.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])[0]?.id;
    expect(streamedId).toBe(whole.choices[0]?.message.tool_calls?.[0]?.id);
  });

  it("streams a blocked prompt as one choice finishing with content_filter", () => {
    const chunks = streamChunks(chatBody, [
      { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } },
    ]);
    expect(chunks.map((chunk) => chunk.choices)).toEqual([
      [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null }],
      [{ index: 0, delta: {}, finish_reason: "content_filter", logprobs: null }],
    ]);
  });

  it("keeps the choices of several candidates apart and maps MAX_TOKENS to length", () => {
    const chunks = streamChunks(chatBody, [
      {
        candidates: [
          { content: { role: "model", parts: [{ text: "A1" }] }, index: 0 },
          { content: { role: "model", parts: [{ text: "B1" }] }, index: 1 },
        ],
      },
      {
        candidates: [
          { content: { role: "model", parts: [{ text: "A2" }] }, index: 0, finishReason: "STOP" },
          { content: { role: "model", parts: [{ text: "B2" }] }, index: 1, finishReason: "MAX_TOKENS" },
        ],
      },
    ]);
    const textOf = (index: number) =>
      chunks
        .flatMap((chunk) =>
          chunk.choices.filter((choice) => choice.index === index).map((choice) => choice.delta.content ?? ""),
        )
        .join("");
    expect([textOf(0), textOf(1)]).toEqual(["A1A2", "B1B2"]);
    const finishes = chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.finish_reason !== null));
    expect(finishes.map((choice) => [choice.index, choice.finish_reason])).toEqual([
      [0, "stop"],
      [1, "length"],
    ]);
  });

  it("closes a choice the provider left open when the stream ends, and never emits [DONE]", () => {
    const translator = geminiChatTranslation.stream(wire(chatBody), context);
    translator.event({ candidates: [{ content: { role: "model", parts: [{ text: "cut" }] }, index: 0 }] });
    const closing = translator.end() as unknown as ChatCompletionChunk[];
    expect(closing.map((chunk) => chunk.choices)).toEqual([
      [{ index: 0, delta: {}, finish_reason: "stop", logprobs: null }],
    ]);
    expect(JSON.stringify(closing)).not.toContain("[DONE]");
  });
});

describe("parallel tool calls", () => {
  it("takes parallel_tool_calls: true, which is what Gemini does, and refuses false, which it cannot be told", () => {
    const body = { model: "m", messages: [user("Hi")], tools: [weatherTool] };
    expect(() => translateRaw({ ...body, parallel_tool_calls: true })).not.toThrow();
    expect(() => translateRaw({ ...body, parallel_tool_calls: false })).toThrow(
      /'parallel_tool_calls' has no counterpart/,
    );
    expect(() =>
      translateRaw({ ...body, parallel_tool_calls: false }, { droppable: ["parallel_tool_calls"] }),
    ).not.toThrow();
  });
});

describe("numbers Gemini takes", () => {
  it("refuses a sampling or length parameter of the wrong type, naming it, instead of sending it", () => {
    const body = { model: "m", messages: [user("Hi")] };
    for (const [param, value] of [
      ["max_tokens", "\u0000"],
      ["max_completion_tokens", 1.5],
      ["temperature", "hot"],
      ["top_p", true],
      ["n", 2.5],
      ["seed", "7"],
    ] as const) {
      expect(() => translateRaw({ ...body, [param]: value })).toThrow(new RegExp(`'${param}' must be`));
    }
    expect(translateRaw({ ...body, max_tokens: 5, temperature: 0.5 }).body.generationConfig).toEqual({
      maxOutputTokens: 5,
      temperature: 0.5,
    });
  });
});
