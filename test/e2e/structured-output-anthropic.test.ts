import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
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
const secret = "SECRET-ANSWER-2e8f";

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
function clientFor(prefix: string): Anthropic {
  return new Anthropic({
    apiKey: "client-key",
    baseURL: `${harness.gateway.url}${prefix}/anthropic`,
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

function messagesCall(): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model: "claude-test",
    max_tokens: 2048,
    system: "Answer in JSON.",
    messages: [{ role: "user", content: "Bootstrap the investigation of job N12." }],
    output_config: { format: { type: "json_schema", schema: v22 } },
  };
}

/** A Messages response whose answer text is `text`. */
function message(text: string): SchemaNode {
  return {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 40 },
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

/** The gateway's Anthropic error body, which the SDK keeps whole on `error.error`. */
interface AnthropicErrorBody {
  type: string;
  error: {
    type: string;
    message: string;
    code: string;
    promptgate: { code: string; ref: string; retryable: boolean; diagnostics?: unknown };
  };
  request_id: string;
}

async function apiErrorOf(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(Anthropic.APIError);
  return caught as InstanceType<typeof Anthropic.APIError>;
}

function bodyOf(error: InstanceType<typeof Anthropic.APIError>): AnthropicErrorBody {
  return error.error as AnthropicErrorBody;
}

/** Everything the gateway sent back for the last exchange: headers and body text. */
async function lastResponseText(): Promise<string> {
  const response = exchanges.at(-1)!.response;
  return `${JSON.stringify([...response.headers])}\n${await response.text()}`;
}

describe("local validation of Anthropic answers under on_invalid = error", () => {
  it("raises UnprocessableEntityError RESPONSE_SCHEMA_INVALID with the contract's diagnostics and no answer value", async () => {
    upstreamAnswers(message(JSON.stringify(answerWithStringFinding())));
    const error = await apiErrorOf(bounded().messages.create(messagesCall()));
    expect(error).toBeInstanceOf(Anthropic.UnprocessableEntityError);
    expect(error.status).toBe(422);
    expect(error.errorCode).toBe("RESPONSE_SCHEMA_INVALID");
    expect(error.headers?.get("x-should-retry")).toBe("false");
    const ref = error.headers?.get("x-promptgate-ref");
    expect(error.requestID).toBe(ref);
    const body = bodyOf(error);
    expect(body).toMatchObject({ type: "error", error: { code: "RESPONSE_SCHEMA_INVALID" }, request_id: ref });
    expect(body.error.promptgate).toEqual({
      code: "RESPONSE_SCHEMA_INVALID",
      ref,
      retryable: false,
      diagnostics: contractDiagnostics,
    });
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("reports only the alternative that next.action names, and a boolean as a boolean", async () => {
    const answer = validAnswer();
    answer.next = {
      action: "recall",
      arguments: { kind: "recall", evidence_refs: ["E000001"], page: true },
      rationale: secret,
    };
    upstreamAnswers(message(JSON.stringify(answer)));
    const error = await apiErrorOf(bounded().messages.create(messagesCall()));
    expect(bodyOf(error).error.promptgate.diagnostics).toEqual({
      valid: false,
      errors: [
        {
          validation_path: "/next/arguments/page",
          validation_keyword: "type",
          expected_types: ["integer"],
          actual_type: "boolean",
          hint: expect.any(String),
        },
      ],
    });
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("reports an answer that is not JSON with keyword json", async () => {
    upstreamAnswers(message(`{"assessment": {"summary": "${secret}"`));
    const error = await apiErrorOf(bounded().messages.create(messagesCall()));
    expect(error).toBeInstanceOf(Anthropic.UnprocessableEntityError);
    expect(bodyOf(error).error.promptgate.diagnostics).toEqual({
      valid: false,
      errors: [{ validation_path: "", validation_keyword: "json", hint: expect.any(String) }],
    });
    expect(await lastResponseText()).not.toContain(secret);
  });

  it("passes a valid answer through byte for byte with x-promptgate-validation: valid", async () => {
    const upstream = message(JSON.stringify(validAnswer()));
    upstreamAnswers(upstream);
    const { data, response } = await bounded().messages.create(messagesCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect(data.content[0]).toEqual({ type: "text", text: JSON.stringify(validAnswer()) });
    expect(await exchanges[0]!.response.text()).toBe(JSON.stringify(upstream));
    expect(upstreamBody()).toEqual(JSON.parse(exchanges[0]!.requestBody));
  });
});

describe("Anthropic answers under on_invalid = annotate (the default policy)", () => {
  it("relays an invalid answer unchanged plus a top-level promptgate.validation member", async () => {
    const upstream = message(JSON.stringify(answerWithStringFinding()));
    upstreamAnswers(upstream);
    const { data, response } = await clientFor("").messages.create(messagesCall()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    const { promptgate, ...rest } = data as unknown as SchemaNode;
    expect(rest).toEqual(upstream);
    expect(promptgate).toEqual({ validation: contractDiagnostics });
  });

  it("annotates under case.interpretation too", async () => {
    upstreamAnswers(message(JSON.stringify(validAnswer())));
    const { data, response } = await clientFor("/policies/case.interpretation")
      .messages.create(messagesCall())
      .withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect((data as unknown as SchemaNode).promptgate).toEqual({ validation: { valid: true, errors: [] } });
  });
});

describe("the x-promptgate-schema header on Anthropic", () => {
  const named = { headers: { "x-promptgate-schema": "investigation_bootstrap_v22" } };

  it("injects the full named schema as output_config.format and validates the answer against it", async () => {
    upstreamAnswers(message(JSON.stringify(answerWithStringFinding())));
    const error = await apiErrorOf(
      bounded().messages.create(
        { model: "claude-test", max_tokens: 512, messages: [{ role: "user", content: "Bootstrap." }] },
        named,
      ),
    );
    expect(error).toBeInstanceOf(Anthropic.UnprocessableEntityError);
    expect(bodyOf(error).error.promptgate.diagnostics).toEqual(contractDiagnostics);
    const { output_config, ...rest } = upstreamBody();
    expect(rest).toEqual(JSON.parse(exchanges[0]!.requestBody));
    expect(output_config).toEqual({ format: { type: "json_schema", schema: v22 } });
  });

  it("answers an unknown schema name with BadRequestError INVALID_REQUEST, sending nothing", async () => {
    const error = await apiErrorOf(
      bounded().messages.create(
        { model: "claude-test", max_tokens: 512, messages: [{ role: "user", content: "Bootstrap." }] },
        { headers: { "x-promptgate-schema": "no_such_schema_7d2b" } },
      ),
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.errorCode).toBe("INVALID_REQUEST");
    expect(harness.upstream.received).toHaveLength(0);
  });
});

describe("Anthropic's own rejection of the response schema", () => {
  const providerMessage = "output_config.format.schema: Schemas with 'discriminator' are not supported.";

  it("becomes BadRequestError INVALID_REQUEST with keyword provider_schema and without the provider's text", async () => {
    upstreamAnswers(
      { type: "error", error: { type: "invalid_request_error", message: providerMessage }, request_id: "req_up" },
      400,
    );
    const error = await apiErrorOf(bounded().messages.create(messagesCall()));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.errorCode).toBe("INVALID_REQUEST");
    expect(bodyOf(error).error.promptgate.diagnostics).toEqual({
      valid: false,
      errors: [
        {
          validation_path: "",
          validation_keyword: "provider_schema",
          refused_keyword: "discriminator",
          hint: expect.any(String),
        },
      ],
    });
    const text = await lastResponseText();
    expect(text).not.toContain("not supported");
    expect(text).not.toContain("req_up");
  });
});
