import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { contractDiagnostics, investigationAnswers } from "../support/investigation-answers.js";

type SchemaNode = Record<string, unknown>;

/** One exchange between the SDK and the gateway, as the SDK's fetch saw it. */
interface Exchange {
  requestBody: string;
  /** A copy of the gateway's response, read after the SDK has read its own. */
  response: Response;
}

let harness: GatewayUnderTest;
let exchanges: Exchange[];

const v22 = JSON.parse(
  readFileSync(new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url), "utf8"),
) as SchemaNode;

/** A string that stands for answer content: no error body or header may ever carry it. */
const secret = "SECRET-ANSWER-9b4d";

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  exchanges = [];
});

/** A stock client with only its base URL changed (`prefix` pins a policy); its fetch records each exchange. */
function clientFor(prefix: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-client",
    baseURL: `${harness.gateway.url}${prefix}/openai/v1`,
    maxRetries: 0,
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      exchanges.push({ requestBody: typeof init?.body === "string" ? init.body : "", response: response.clone() });
      return response;
    },
  });
}

const bounded = () => clientFor("/policies/investigation.bounded");

const { validAnswer, answerWithStringFinding } = investigationAnswers(secret);

const responseFormat = {
  type: "json_schema" as const,
  json_schema: { name: "investigation_bootstrap_v22", schema: v22, strict: false },
};

function chatCall(extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) {
  return {
    model: "gpt-test",
    messages: [
      { role: "developer" as const, content: "Answer in JSON." },
      { role: "user" as const, content: "Bootstrap the investigation of job N12." },
    ],
    response_format: responseFormat,
    ...extra,
  };
}

/** A Chat Completions response whose answer text is `content`. */
function chatCompletion(content: string): SchemaNode {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-test",
    choices: [
      { index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 },
  };
}

/** A Responses API response whose answer text is `text`. */
function responseObject(text: string): SchemaNode {
  return {
    id: "resp_1",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    model: "gpt-test",
    output: [
      {
        type: "message",
        id: "msg_1",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    usage: { input_tokens: 12, output_tokens: 40, total_tokens: 52 },
  };
}

/** Makes the fake upstream answer every request with this JSON body. */
function upstreamAnswers(body: unknown, status = 200): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
}

function upstreamBody(index = 0): SchemaNode {
  return JSON.parse(harness.upstream.received[index]?.body ?? "null");
}

/** The native `error` object the gateway renders, as the SDK keeps it on `error.error`. */
interface OpenAIErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string;
  promptgate: { code: string; ref: string; retryable: boolean; diagnostics?: unknown };
}

async function apiErrorOf(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(OpenAI.APIError);
  return caught as InstanceType<typeof OpenAI.APIError>;
}

function errorObject(error: InstanceType<typeof OpenAI.APIError>): OpenAIErrorObject {
  return error.error as OpenAIErrorObject;
}

/** Everything the gateway sent back for the last exchange: headers and body text. */
async function lastResponseText(): Promise<string> {
  const response = exchanges.at(-1)!.response;
  return `${JSON.stringify([...response.headers])}\n${await response.text()}`;
}

describe("local validation of OpenAI answers under on_invalid = error", () => {
  it("raises UnprocessableEntityError RESPONSE_SCHEMA_INVALID with the contract's diagnostics and no answer value", async () => {
    upstreamAnswers(chatCompletion(JSON.stringify(answerWithStringFinding())));
    const error = await apiErrorOf(bounded().chat.completions.create(chatCall()));
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(error.status).toBe(422);
    expect(error.code).toBe("RESPONSE_SCHEMA_INVALID");
    expect(error.headers?.get("x-should-retry")).toBe("false");
    const ref = error.headers?.get("x-promptgate-ref");
    expect(ref).toMatch(/^ref_[0-9a-f]{16}$/);
    expect(errorObject(error)).toMatchObject({ type: "invalid_request_error", code: "RESPONSE_SCHEMA_INVALID" });
    expect(errorObject(error).promptgate).toEqual({
      code: "RESPONSE_SCHEMA_INVALID",
      ref,
      retryable: false,
      diagnostics: contractDiagnostics,
    });
    expect(await lastResponseText()).not.toContain(secret);
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("raises the same error for a Responses call with text.format", async () => {
    upstreamAnswers(responseObject(JSON.stringify(answerWithStringFinding())));
    const error = await apiErrorOf(
      bounded().responses.create({
        model: "gpt-test",
        input: "Bootstrap the investigation of job N12.",
        text: { format: { type: "json_schema", name: "investigation_bootstrap_v22", schema: v22, strict: false } },
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(error.code).toBe("RESPONSE_SCHEMA_INVALID");
    expect(errorObject(error).promptgate.diagnostics).toEqual(contractDiagnostics);
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("reports an answer that is not JSON with keyword json", async () => {
    upstreamAnswers(chatCompletion(`{"assessment": {"summary": "${secret}"`));
    const error = await apiErrorOf(bounded().chat.completions.create(chatCall()));
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(errorObject(error).promptgate.diagnostics).toEqual({
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "json", hint: expect.any(String) }],
    });
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("passes a valid answer through byte for byte with x-promptgate-validation: valid", async () => {
    const upstream = chatCompletion(JSON.stringify(validAnswer()));
    upstreamAnswers(upstream);
    const { data, response } = await bounded().chat.completions.create(chatCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect(data.choices[0]?.message.content).toBe(JSON.stringify(validAnswer()));
    expect(await exchanges[0]!.response.text()).toBe(JSON.stringify(upstream));
    expect(upstreamBody()).toEqual(JSON.parse(exchanges[0]!.requestBody));
  });

  // so with n = 2 an invalid second answer reaches the client under on_invalid = "error", and the
  // response even says x-promptgate-validation: valid. The same holds for Gemini's candidateCount.
  // Fix: let StructuredOutput return every choice's (candidate's) answer text and validate each;
  // refuse the response if any is invalid (annotate: one validation per choice).
  it("validates every choice of an n = 2 completion, refusing an invalid second one", async () => {
    const upstream = chatCompletion(JSON.stringify(validAnswer()));
    const second = { index: 1, message: { role: "assistant", content: JSON.stringify(answerWithStringFinding()) } };
    upstreamAnswers({
      ...upstream,
      choices: [...(upstream.choices as unknown[]), { ...second, finish_reason: "stop" }],
    });
    const error = await apiErrorOf(bounded().chat.completions.create(chatCall({ n: 2 })));
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });
});

describe("OpenAI answers under on_invalid = annotate (the default policy)", () => {
  it("relays an invalid answer unchanged plus a top-level promptgate.validation member", async () => {
    const upstream = chatCompletion(JSON.stringify(answerWithStringFinding()));
    upstreamAnswers(upstream);
    const { data, response } = await clientFor("").chat.completions.create(chatCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    const { promptgate, ...rest } = data as unknown as SchemaNode;
    expect(rest).toEqual(upstream);
    expect(promptgate).toEqual({ validation: contractDiagnostics });
  });

  it("annotates a valid answer as valid under /policies/default", async () => {
    upstreamAnswers(chatCompletion(JSON.stringify(validAnswer())));
    const { data, response } = await clientFor("/policies/default").chat.completions.create(chatCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect((data as unknown as SchemaNode).promptgate).toEqual({ validation: { valid: true, errors: [] } });
  });

  it("annotates an unparseable answer with keyword json", async () => {
    upstreamAnswers(chatCompletion("not json at all"));
    const { data, response } = await clientFor("").chat.completions.create(chatCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    expect(data.choices[0]?.message.content).toBe("not json at all");
    expect((data as unknown as SchemaNode).promptgate).toEqual({
      validation: {
        valid: false,
        errors: [{ validation_path: "", validation_keyword: "json", hint: expect.any(String) }],
      },
    });
  });
});

describe("the x-promptgate-schema header on OpenAI", () => {
  const named = { headers: { "x-promptgate-schema": "investigation_bootstrap_v22" } };

  it("injects the full named schema as response_format json_schema into a chat completion", async () => {
    upstreamAnswers(chatCompletion(JSON.stringify(validAnswer())));
    const { response } = await bounded()
      .chat.completions.create(
        { model: "gpt-test", temperature: 0.2, messages: [{ role: "user", content: "Bootstrap." }] },
        named,
      )
      .withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    const { response_format, ...rest } = upstreamBody();
    expect(rest).toEqual(JSON.parse(exchanges[0]!.requestBody));
    expect(response_format).toEqual({
      type: "json_schema",
      json_schema: { name: expect.any(String), schema: v22, strict: false },
    });
    const size = JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null");
    expect(size).toMatchObject({ check: "preflight", schema_chars: JSON.stringify(v22).length });
  });

  it("injects the full named schema as text.format into a Responses call", async () => {
    upstreamAnswers(responseObject(JSON.stringify(validAnswer())));
    const { data, response } = await bounded()
      .responses.create({ model: "gpt-test", input: "Bootstrap." }, named)
      .withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect(data.output_text).toBe(JSON.stringify(validAnswer()));
    expect((upstreamBody().text as SchemaNode).format).toEqual({
      type: "json_schema",
      name: expect.any(String),
      schema: v22,
      strict: false,
    });
  });

  it("validates the answer against the named schema", async () => {
    upstreamAnswers(chatCompletion(JSON.stringify(answerWithStringFinding())));
    const error = await apiErrorOf(
      bounded().chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "Go." }] }, named),
    );
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(errorObject(error).promptgate.diagnostics).toEqual(contractDiagnostics);
  });

  // (chat-structured-output.ts transports nothing when `native`) while the answer is validated against
  // the named one (prepare-call.ts: `namedSchema ?? output.fullSchema(...)`), so an answer that conforms
  // to what the model was asked for is refused; the preflight counts the native schema only. Gemini
  // differs again: it sends the named schema's projection in place of the client's. Fix: when the
  // native schema and the named one differ (canonical JSON), answer 400 INVALID_REQUEST (conflicting
  // fields, as for Gemini's responseJsonSchema + responseSchema) before anything is sent.
  it("refuses a native schema that differs from the named one with BadRequestError INVALID_REQUEST", async () => {
    const native = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    upstreamAnswers(chatCompletion(JSON.stringify({ answer: "yes" })));
    const error = await apiErrorOf(
      bounded().chat.completions.create(
        {
          model: "gpt-test",
          messages: [{ role: "user", content: "Go." }],
          response_format: { type: "json_schema", json_schema: { name: "answer", schema: native } },
        },
        named,
      ),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe("INVALID_REQUEST");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("answers an unknown schema name with BadRequestError INVALID_REQUEST, sending nothing", async () => {
    const error = await apiErrorOf(
      bounded().chat.completions.create(
        { model: "gpt-test", messages: [{ role: "user", content: "Go." }] },
        { headers: { "x-promptgate-schema": "no_such_schema_7d2b" } },
      ),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe("INVALID_REQUEST");
    expect(errorObject(error).param).toBe("x-promptgate-schema");
    expect(await lastResponseText()).not.toContain("no_such_schema_7d2b");
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("a streamed OpenAI answer with a schema", () => {
  it("passes an invalid streamed chat answer through unchanged under on_invalid = error", async () => {
    const answer = JSON.stringify(answerWithStringFinding());
    const pieces = [answer.slice(0, 40), answer.slice(40, 120), answer.slice(120)];
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: "gpt-test",
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      })}\n\n`;
    const events = [
      ...pieces.map((content, index) => chunk(index === 0 ? { role: "assistant", content } : { content }, null)),
      chunk({}, "stop"),
      "data: [DONE]\n\n",
    ];
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      for (const event of events) response.write(event);
      response.end();
    });
    const stream = await bounded().chat.completions.create({ ...chatCall(), stream: true });
    const texts: string[] = [];
    for await (const event of stream) {
      const content = event.choices[0]?.delta.content;
      if (content) texts.push(content);
    }
    expect(texts).toEqual(pieces);
    expect(await exchanges[0]!.response.text()).toBe(events.join(""));
    expect(exchanges[0]!.response.headers.get("x-promptgate-validation")).toBeNull();
  });
});

describe("OpenAI's own rejection of the response schema", () => {
  const providerMessage =
    "Invalid schema for response_format 'investigation_bootstrap_v22': In context=(), 'discriminator' is not permitted.";

  it("becomes BadRequestError INVALID_REQUEST with keyword provider_schema and without the provider's text", async () => {
    upstreamAnswers(
      { error: { message: providerMessage, type: "invalid_request_error", param: "response_format", code: null } },
      400,
    );
    const error = await apiErrorOf(bounded().chat.completions.create(chatCall()));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe("INVALID_REQUEST");
    expect(errorObject(error).promptgate.diagnostics).toEqual({
      valid: false,
      errors: [
        {
          validation_path: "",
          validation_keyword: "provider_schema",
          refused_keyword: "discriminator",
          hint: "The provider rejected the response schema, naming its keyword 'discriminator'.",
        },
      ],
    });
    const text = await lastResponseText();
    expect(text).not.toContain("not permitted");
    expect(text).not.toContain(providerMessage);
  });

  it("names the place in the schema the provider names, as far as the schema sent holds it", async () => {
    const message =
      "Invalid schema for response_format 'investigation_bootstrap_v22': In context=('properties', 'update', 'secret'), 'minimum' is not permitted.";
    upstreamAnswers({ error: { message, type: "invalid_request_error", param: "response_format", code: null } }, 400);
    const error = await apiErrorOf(bounded().chat.completions.create(chatCall()));
    expect(errorObject(error).promptgate.diagnostics).toEqual({
      valid: false,
      errors: [
        {
          validation_path: "/properties/update/*",
          validation_keyword: "provider_schema",
          refused_keyword: "minimum",
          hint: "The provider rejected the response schema at /properties/update/*, naming its keyword 'minimum'.",
        },
      ],
    });
    expect(await lastResponseText()).not.toContain("secret");
  });
});
