import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

type SchemaNode = Record<string, unknown>;

/** A v22 answer loose enough for a test to break any part of it. */
interface Answer {
  assessment: Record<string, unknown>;
  update: { working_brief: { findings: Record<string, unknown>[] }; retired: string[]; next_step: SchemaNode };
  next: Record<string, unknown>;
}

let harness: GatewayUnderTest;
let openai: OpenAI;

const v22 = JSON.parse(
  readFileSync(new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url), "utf8"),
) as SchemaNode;

/** A string that stands for answer content: no error body may ever carry it. */
const secret = "SECRET-QUERY-61aa";
const query = `select * from job_runs where job = 'N12' -- ${secret}`;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  openai = openAIFor("/policies/investigation.bounded");
});

function openAIFor(prefix: string): OpenAI {
  return new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}${prefix}/openai/v1`, maxRetries: 0 });
}

/** A v22 answer, valid but for `next`, which the test gives. */
function answerWith(next: Record<string, unknown>): Answer {
  return {
    assessment: { summary: "Job N12 stalls after its third retry.", confidence: "medium", hypothesis_status: "open" },
    update: {
      working_brief: {
        findings: [
          { id: "F1", direction: "supports", text: "The loop stops.", scope: "N12", evidence_refs: ["E000001"] },
        ],
      },
      retired: [],
      next_step: { intent: "Query the job runs.", expected_signal: "A timeout before the third retry." },
    },
    next,
  };
}

/** `next` as a model wraps it: the project query's arguments inside a one-element `choices` list. */
function enveloped(element: Record<string, unknown> = { kind: "sql", query }): Record<string, unknown> {
  return {
    action: "tool/project.query",
    arguments: { choices: [element] },
    rationale: "The job runs show when the loop ends.",
  };
}

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

/** Makes the fake upstream answer every request with this JSON body. */
function upstreamAnswers(body: unknown): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
}

function chatCall(): OpenAI.ChatCompletionCreateParamsNonStreaming {
  return {
    model: "gpt-test",
    messages: [{ role: "user", content: "Bootstrap the investigation of job N12." }],
    response_format: { type: "json_schema", json_schema: { name: "bootstrap", schema: v22, strict: false } },
  };
}

async function unprocessable(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  return caught as InstanceType<typeof OpenAI.APIError>;
}

interface Diagnostics {
  valid: boolean;
  errors: { validation_path: string; validation_keyword: string }[];
}

function diagnosticsOf(error: InstanceType<typeof OpenAI.APIError>): Diagnostics {
  return (error.error as { promptgate: { diagnostics: Diagnostics } }).promptgate.diagnostics;
}

describe("the unwrap-query-choices repair of investigation.bounded", () => {
  it("hands the client the repaired answer, valid, with arguments replaced by the one inner object", async () => {
    const upstream = chatCompletion(JSON.stringify(answerWith(enveloped())));
    upstreamAnswers(upstream);
    const { data, response } = await openai.chat.completions.create(chatCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    const repaired = answerWith({ ...enveloped(), arguments: { kind: "sql", query } });
    expect(JSON.parse(data.choices[0]?.message.content ?? "null")).toEqual(repaired);
    const { choices, ...rest } = data;
    const { choices: _upstreamChoices, ...upstreamRest } = upstream;
    expect(rest).toEqual(upstreamRest);
    expect(choices[0]).toMatchObject({ index: 0, finish_reason: "stop", message: { role: "assistant" } });
  });

  it("never adds a missing offset: the unwrapped object keeps exactly its own members", async () => {
    upstreamAnswers(chatCompletion(JSON.stringify(answerWith(enveloped({ kind: "log_search", query, limit: 50 })))));
    const data = await openai.chat.completions.create(chatCall());
    const answer = JSON.parse(data.choices[0]?.message.content ?? "null") as Answer;
    expect(answer.next.arguments).toEqual({ kind: "log_search", query, limit: 50 });
    expect(answer.next.arguments).not.toHaveProperty("offset");
  });

  const refused: [string, Record<string, unknown>][] = [
    [
      "two alternatives in choices",
      {
        ...enveloped(),
        arguments: {
          choices: [
            { kind: "sql", query },
            { kind: "log_search", query },
          ],
        },
      },
    ],
    ["an extra member beside choices", { ...enveloped(), arguments: { choices: [{ kind: "sql", query }], limit: 10 } }],
    [
      "a choices envelope under action recall",
      {
        action: "recall",
        arguments: { choices: [{ kind: "recall", evidence_refs: ["E000001"], page: 0 }] },
        rationale: secret,
      },
    ],
    ["a choice without kind", enveloped({ query })],
    ["an empty choices list", { ...enveloped(), arguments: { choices: [] } }],
  ];

  it.each(refused)("does not repair %s and answers 422 RESPONSE_SCHEMA_INVALID", async (_case, next) => {
    upstreamAnswers(chatCompletion(JSON.stringify(answerWith(next))));
    const error = await unprocessable(openai.chat.completions.create(chatCall()));
    expect(error.code).toBe("RESPONSE_SCHEMA_INVALID");
    const diagnostics = diagnosticsOf(error);
    expect(diagnostics.valid).toBe(false);
    expect(diagnostics.errors.length).toBeGreaterThan(0);
    for (const failure of diagnostics.errors) expect(failure.validation_path).toMatch(/^\/next\/arguments(\/|$)/);
    expect(JSON.stringify(error.error)).not.toContain(secret);
  });

  it("does not repair when the answer stays invalid elsewhere, and reports the original's errors", async () => {
    const answer = answerWith(enveloped());
    answer.update.working_brief.findings[0]!.id = "X1";
    upstreamAnswers(chatCompletion(JSON.stringify(answer)));
    const error = await unprocessable(openai.chat.completions.create(chatCall()));
    const paths = diagnosticsOf(error).errors.map((failure) => failure.validation_path);
    expect(paths).toContain("/update/working_brief/findings/0/id");
    expect(paths.some((path) => path.startsWith("/next/arguments"))).toBe(true);
  });

  it("is off under a policy that names no rule: the default policy annotates the envelope as invalid", async () => {
    const content = JSON.stringify(answerWith(enveloped()));
    upstreamAnswers(chatCompletion(content));
    const { data, response } = await openAIFor("").chat.completions.create(chatCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    expect(data.choices[0]?.message.content).toBe(content);
  });

  it("does not touch a streamed answer, which passes through as it arrives", async () => {
    const content = JSON.stringify(answerWith(enveloped()));
    const event = `data: ${JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "gpt-test",
      choices: [{ index: 0, delta: { role: "assistant", content }, logprobs: null, finish_reason: "stop" }],
    })}\n\n`;
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(`${event}data: [DONE]\n\n`);
    });
    const stream = await openai.chat.completions.create({ ...chatCall(), stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(content);
  });

  it("repairs a Responses answer in its output_text part", async () => {
    upstreamAnswers({
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
          content: [{ type: "output_text", text: JSON.stringify(answerWith(enveloped())), annotations: [] }],
        },
      ],
      usage: { input_tokens: 12, output_tokens: 40, total_tokens: 52 },
    });
    const { data, response } = await openai.responses
      .create({
        model: "gpt-test",
        input: "Bootstrap.",
        text: { format: { type: "json_schema", name: "bootstrap", schema: v22, strict: false } },
      })
      .withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect((JSON.parse(data.output_text) as Answer).next.arguments).toEqual({ kind: "sql", query });
  });

  it("repairs a Gemini answer in its candidate's text part", async () => {
    upstreamAnswers({
      candidates: [
        {
          content: { role: "model", parts: [{ text: JSON.stringify(answerWith(enveloped())) }] },
          finishReason: "STOP",
          index: 0,
        },
      ],
      modelVersion: "gemini-test",
    });
    const gemini = new GoogleGenAI({
      apiKey: "client-key",
      httpOptions: { baseUrl: `${harness.gateway.url}/policies/investigation.bounded/gemini` },
    });
    const result = await gemini.models.generateContent({
      model: "gemini-test",
      contents: "Bootstrap.",
      config: { responseMimeType: "application/json", responseJsonSchema: v22 },
    });
    expect(result.sdkHttpResponse?.headers?.["x-promptgate-validation"]).toBe("valid");
    expect((JSON.parse(result.text ?? "null") as Answer).next.arguments).toEqual({ kind: "sql", query });
  });

  it("repairs an Anthropic answer in its text block", async () => {
    upstreamAnswers({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [{ type: "text", text: JSON.stringify(answerWith(enveloped())) }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 40 },
    });
    const anthropic = new Anthropic({
      apiKey: "client-key",
      baseURL: `${harness.gateway.url}/policies/investigation.bounded/anthropic`,
      maxRetries: 0,
    });
    const { data, response } = await anthropic.messages
      .create({
        model: "claude-test",
        max_tokens: 1024,
        messages: [{ role: "user", content: "Bootstrap." }],
        output_config: { format: { type: "json_schema", schema: v22 } },
      })
      .withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    const block = data.content[0];
    expect(block?.type).toBe("text");
    const text = block?.type === "text" ? block.text : "null";
    expect((JSON.parse(text) as Answer).next.arguments).toEqual({ kind: "sql", query });
  });
});
