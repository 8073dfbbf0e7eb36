import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// Regressions of an adversarial review that got about 100,000 characters through
// investigation.bounded (limit 20,000) on the OpenAI surface. Each route must be refused before
// anything reaches the provider; where a measuring policy counts it instead, the size must show in
// x-promptgate-prompt-size.

let harness: GatewayUnderTest;
/** A stock client on investigation.bounded. */
let bounded: OpenAI;
/** A stock client on the default policy (no prefix). */
let unpinned: OpenAI;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  bounded = new OpenAI({ apiKey: "sk-client", baseURL: boundedBaseUrl(), maxRetries: 0 });
  unpinned = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
});

const boundedBaseUrl = () => `${harness.gateway.url}/policies/investigation.bounded/openai/v1`;

/** 100,000 characters, 100,000 code points: five times the investigation.bounded limit. */
const big = "x".repeat(100_000);

/** The text as a base64 `data:` URL of type text/plain. */
const textDataUrl = (text: string) => `data:text/plain;base64,${Buffer.from(text, "utf8").toString("base64")}`;

const schema = {
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"],
  additionalProperties: false,
};

type PromptSize = Record<string, number | boolean | string>;

function sizeHeader(headers: Headers | undefined): PromptSize {
  return JSON.parse(headers?.get("x-promptgate-prompt-size") ?? "null");
}

interface PromptgateMember {
  code: string;
  ref: string;
  retryable: boolean;
  prompt_size?: PromptSize;
}

type BadRequest = InstanceType<typeof OpenAI.BadRequestError>;

/** The BadRequestError a call is refused with, its code as `code` is the native field. */
async function refusalOf(call: Promise<unknown>, code: string): Promise<BadRequest> {
  const caught = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(OpenAI.BadRequestError);
  const error = caught as BadRequest;
  expect(error.status).toBe(400);
  expect(error.code).toBe(code);
  expect(error.headers.get("x-should-retry")).toBe("false");
  expect(promptgateOf(error)).toMatchObject({ code, retryable: false });
  return error;
}

function promptgateOf(error: BadRequest): PromptgateMember {
  return (error.error as { promptgate: PromptgateMember }).promptgate;
}

/** The prompt_size a window refusal carries, in its body and in its header alike. */
function refusedSize(error: BadRequest): PromptSize {
  const size = promptgateOf(error).prompt_size;
  expect(size).toBeDefined();
  expect(sizeHeader(error.headers)).toMatchObject({ check: "preflight" });
  return size as PromptSize;
}

/** A raw POST of a JSON text to the gateway, for what no SDK sends (duplicate keys). */
function postRaw(baseUrl: string, path: string, text: string): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
    body: text,
  });
}

/** The openai SDK's own way to send fields its types do not declare: the request option `body`. */
function withExtraFields<T extends object>(params: T, extra: Record<string, unknown>): { body: unknown } {
  return { body: { ...params, ...extra } };
}

describe("OpenAI response schema text (investigation.bounded)", () => {
  it("refuses a chat completion whose json_schema description carries 100,000 characters, sending nothing", async () => {
    const error = await refusalOf(
      bounded.chat.completions.create({
        model: "gpt-test",
        messages: [{ role: "user", content: "Answer." }],
        response_format: { type: "json_schema", json_schema: { name: "answer", description: big, schema } },
      }),
      "INVESTIGATION_PROMPT_LIMIT",
    );
    expect(refusedSize(error).schema_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts a 100,000-character json_schema description as schema_chars under the default policy", async () => {
    const { response } = await unpinned.chat.completions
      .create({
        model: "gpt-test",
        messages: [{ role: "user", content: "Answer." }],
        response_format: { type: "json_schema", json_schema: { name: "answer", description: big, schema } },
      })
      .withResponse();
    expect(sizeHeader(response.headers).schema_chars).toBeGreaterThanOrEqual(100_000);
  });

  it("refuses a Responses call whose text.format description carries 100,000 characters, sending nothing", async () => {
    const error = await refusalOf(
      bounded.responses.create({
        model: "gpt-test",
        input: "Answer.",
        text: { format: { type: "json_schema", name: "answer", description: big, schema } },
      }),
      "INVESTIGATION_PROMPT_LIMIT",
    );
    expect(refusedSize(error).schema_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts a 100,000-character text.format description as schema_chars under the default policy", async () => {
    const { response } = await unpinned.responses
      .create({
        model: "gpt-test",
        input: "Answer.",
        text: { format: { type: "json_schema", name: "answer", description: big, schema } },
      })
      .withResponse();
    expect(sizeHeader(response.headers).schema_chars).toBeGreaterThanOrEqual(100_000);
  });
});

describe("OpenAI chat text outside message content (investigation.bounded)", () => {
  it("refuses a chat completion whose prediction.content carries 100,000 characters, sending nothing", async () => {
    const error = await refusalOf(
      bounded.chat.completions.create({
        model: "gpt-test",
        messages: [{ role: "user", content: "Rewrite the file." }],
        prediction: { type: "content", content: big },
      }),
      "INVESTIGATION_PROMPT_LIMIT",
    );
    expect(refusedSize(error).message_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts a 100,000-character prediction.content as message_chars under the default policy", async () => {
    const { response } = await unpinned.chat.completions
      .create({
        model: "gpt-test",
        messages: [{ role: "user", content: "Rewrite the file." }],
        prediction: { type: "content", content: [{ type: "text", text: big }] },
      })
      .withResponse();
    expect(sizeHeader(response.headers).message_chars).toBeGreaterThanOrEqual(100_000);
  });

  it("refuses a chat completion whose messages[].name carries 100,000 characters, sending nothing", async () => {
    const error = await refusalOf(
      bounded.chat.completions.create({
        model: "gpt-test",
        messages: [{ role: "user", name: big, content: "Hello." }],
      }),
      "INVESTIGATION_PROMPT_LIMIT",
    );
    expect(refusedSize(error).message_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts a 100,000-character messages[].name as message_chars under the default policy", async () => {
    const { response } = await unpinned.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", name: big, content: "Hello." }] })
      .withResponse();
    expect(sizeHeader(response.headers).message_chars).toBeGreaterThanOrEqual(100_000);
  });
});

describe("OpenAI text sent as a file (investigation.bounded)", () => {
  const chatFile = {
    model: "gpt-test",
    messages: [
      {
        role: "user" as const,
        content: [
          { type: "text" as const, text: "Summarize the notes." },
          { type: "file" as const, file: { filename: "notes.txt", file_data: textDataUrl(big) } },
        ],
      },
    ],
  };
  const responsesFile = {
    model: "gpt-test",
    input: [
      {
        role: "user" as const,
        content: [
          { type: "input_text" as const, text: "Summarize the notes." },
          { type: "input_file" as const, filename: "notes.txt", file_data: textDataUrl(big) },
        ],
      },
    ],
  };

  it("refuses a chat file part whose file_data is 100,000 characters of data:text/plain;base64, sending nothing", async () => {
    const error = await refusalOf(bounded.chat.completions.create(chatFile), "INVESTIGATION_PROMPT_LIMIT");
    expect(refusedSize(error)).toMatchObject({ media_parts: 0 });
    expect(refusedSize(error).message_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts a chat file part of text/plain as its decoded characters under the default policy", async () => {
    const { response } = await unpinned.chat.completions.create(chatFile).withResponse();
    const size = sizeHeader(response.headers);
    expect(size.media_parts).toBe(0);
    expect(size.message_chars).toBe("Summarize the notes.".length + "notes.txt".length + 100_000);
  });

  it("refuses a Responses input_file whose file_data is 100,000 characters of data:text/plain;base64, sending nothing", async () => {
    const error = await refusalOf(bounded.responses.create(responsesFile), "INVESTIGATION_PROMPT_LIMIT");
    expect(refusedSize(error)).toMatchObject({ media_parts: 0 });
    expect(refusedSize(error).message_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts a Responses input_file of text/plain as its decoded characters under the default policy", async () => {
    const { response } = await unpinned.responses.create(responsesFile).withResponse();
    const size = sizeHeader(response.headers);
    expect(size.media_parts).toBe(0);
    expect(size.message_chars).toBe("Summarize the notes.".length + "notes.txt".length + 100_000);
  });
});

describe("top-level fields that OpenAI-compatible servers read (vLLM)", () => {
  const fields: Array<[string, unknown]> = [
    ["chat_template", `{{ messages }}${big}`],
    ["chat_template_kwargs", { context: big }],
    ["documents", [{ title: "notes", text: big }]],
  ];
  const params = { model: "gpt-test", messages: [{ role: "user" as const, content: "Hello." }] };

  it.each(fields)(
    "refuses an unknown top-level %s under investigation.bounded as INVALID_REQUEST naming it, sending nothing",
    async (name, value) => {
      const error = await refusalOf(
        bounded.chat.completions.create(params, withExtraFields(params, { [name]: value })),
        "INVALID_REQUEST",
      );
      expect(error.param).toBe(name);
      expect(error.message).toContain(name);
      expect(error.message).not.toContain("xxxxxxxxxx");
      expect(harness.upstream.received).toHaveLength(0);
    },
  );

  it.each(fields)("counts an unknown top-level %s as other_chars under the default policy", async (name, value) => {
    const { response } = await unpinned.chat.completions
      .create(params, withExtraFields(params, { [name]: value }))
      .withResponse();
    const size = sizeHeader(response.headers);
    expect(size.other_chars).toBeGreaterThanOrEqual(JSON.stringify({ [name]: value }).length - 2);
    expect(size.total_chars).toBeGreaterThanOrEqual(100_000);
    expect(harness.upstream.received).toHaveLength(1);
  });
});

describe("duplicate JSON keys (raw HTTP, as no SDK sends them)", () => {
  const small = JSON.stringify([{ role: "user", content: "hi" }]);
  const large = JSON.stringify([{ role: "user", content: big }]);
  const bodies: Array<[string, string, string]> = [
    ["a top-level messages", "/chat/completions", `{"model":"gpt-test","messages":${large},"messages":${small}}`],
    [
      "a content inside a message",
      "/chat/completions",
      `{"model":"gpt-test","messages":[{"role":"user","content":${JSON.stringify(big)},"content":"hi"}]}`,
    ],
    [
      "a text inside a content part",
      "/chat/completions",
      `{"model":"gpt-test","messages":[{"role":"user","content":[{"type":"text","text":${JSON.stringify(big)},"text":"hi"}]}]}`,
    ],
    ["a top-level Responses input", "/responses", `{"model":"gpt-test","input":${JSON.stringify(big)},"input":"hi"}`],
  ];

  it.each(bodies)(
    "refuses a body with a duplicate key in %s as INVALID_REQUEST, sending nothing",
    async (_where, path, text) => {
      const response = await postRaw(boundedBaseUrl(), path, text);
      expect(response.status).toBe(400);
      expect(response.headers.get("x-should-retry")).toBe("false");
      const body = (await response.json()) as { error: { code: string; type: string; promptgate: PromptgateMember } };
      expect(body.error).toMatchObject({ code: "INVALID_REQUEST", type: "invalid_request_error" });
      expect(body.error.promptgate.code).toBe("INVALID_REQUEST");
      expect(harness.upstream.received).toHaveLength(0);
    },
  );
});

describe("Responses content the provider already holds (investigation.bounded)", () => {
  it("refuses a stored prompt template (prompt.id) with CACHE_PREFIX_UNKNOWN, sending nothing", async () => {
    const error = await refusalOf(
      bounded.responses.create({ model: "gpt-test", prompt: { id: "pmpt_0123456789abcdef", version: "2" } }),
      "CACHE_PREFIX_UNKNOWN",
    );
    expect(`${error.param} ${error.message}`).toContain("prompt.id");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses an item_reference input item with CACHE_PREFIX_UNKNOWN, sending nothing", async () => {
    const error = await refusalOf(
      bounded.responses.create({
        model: "gpt-test",
        input: [
          { type: "item_reference", id: "msg_0123456789abcdef" },
          { role: "user", content: "Go on." },
        ],
      }),
      "CACHE_PREFIX_UNKNOWN",
    );
    expect(`${error.param} ${error.message}`).toContain("input[0]");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses a conversation with CACHE_PREFIX_UNKNOWN, sending nothing", async () => {
    const error = await refusalOf(
      bounded.responses.create({ model: "gpt-test", conversation: "conv_0123456789abcdef", input: "Go on." }),
      "CACHE_PREFIX_UNKNOWN",
    );
    expect(`${error.param} ${error.message}`).toContain("conversation");
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("an ordinary call under investigation.bounded", () => {
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    {
      type: "function",
      function: {
        name: "lookup_incident",
        description: "Looks an incident up by its id.",
        parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      },
    },
  ];

  function expectSumAddsUp(size: PromptSize): void {
    const parts = ["system_chars", "message_chars", "tool_chars", "schema_chars", "other_chars", "cache_prefix_chars"];
    const sum = parts.reduce((total, part) => total + (size[part] as number), 0);
    expect(size.total_chars).toBe(sum);
    expect(size.conservative_total_chars).toBe((size.total_chars as number) + 1500);
  }

  it("accepts a realistic chat completion and its prompt_size adds up", async () => {
    const { response } = await bounded.chat.completions
      .create({
        model: "gpt-test",
        temperature: 0.2,
        messages: [
          { role: "system", content: "You triage incidents. Answer in JSON." },
          { role: "user", content: "The checkout API times out since 09:40." },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "lookup_incident", arguments: '{"id":"INC-7"}' } },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "INC-7: database pool exhausted." },
          { role: "user", content: "What is the likely cause?" },
        ],
        tools,
        response_format: { type: "json_schema", json_schema: { name: "answer", schema, strict: true } },
      })
      .withResponse();
    expect(harness.upstream.received).toHaveLength(1);
    const size = sizeHeader(response.headers);
    expect(size).toMatchObject({
      check: "preflight",
      system_chars: "You triage incidents. Answer in JSON.".length,
      tool_chars: JSON.stringify(tools[0]).length,
      schema_chars: "answer".length + JSON.stringify(schema).length,
      cache_prefix_chars: 0,
      media_parts: 0,
      over_target: false,
    });
    expect(size.message_chars).toBeGreaterThan(0);
    expect(size.other_chars).toBeGreaterThan(0);
    expectSumAddsUp(size);
  });

  it("accepts a realistic Responses call and its prompt_size adds up", async () => {
    const { response } = await bounded.responses
      .create({
        model: "gpt-test",
        instructions: "You triage incidents. Answer in JSON.",
        input: [
          { role: "user", content: "The checkout API times out since 09:40." },
          { type: "function_call", call_id: "call_1", name: "lookup_incident", arguments: '{"id":"INC-7"}' },
          { type: "function_call_output", call_id: "call_1", output: "INC-7: database pool exhausted." },
          { role: "user", content: "What is the likely cause?" },
        ],
        tools: [
          {
            type: "function",
            name: "lookup_incident",
            description: "Looks an incident up by its id.",
            parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
            strict: false,
          },
        ],
        text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
      })
      .withResponse();
    expect(harness.upstream.received).toHaveLength(1);
    const size = sizeHeader(response.headers);
    expect(size).toMatchObject({
      check: "preflight",
      system_chars: "You triage incidents. Answer in JSON.".length,
      schema_chars: "answer".length + JSON.stringify(schema).length,
      cache_prefix_chars: 0,
      over_target: false,
    });
    expect(size.message_chars).toBeGreaterThan(0);
    expect(size.tool_chars).toBeGreaterThan(0);
    expectSumAddsUp(size);
  });
});
