import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

let harness: GatewayUnderTest;
let client: OpenAI;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  client = new OpenAI({
    apiKey: "sk-client",
    baseURL: `${harness.gateway.url}/policies/investigation.bounded/openai/v1`,
    maxRetries: 0,
  });
});

const schema = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "number", minimum: 0, maximum: 1 } },
  required: ["answer", "confidence"],
  additionalProperties: false,
};

function sizeHeader(response: Response): Record<string, unknown> {
  return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null");
}

describe("the openai SDK through the gateway", () => {
  it("sends an accepted chat completion upstream byte for byte, unknown fields included and counted as other", async () => {
    // The default policy counts a field it does not know; investigation.bounded refuses it.
    const counting = new OpenAI({ apiKey: "sk-client", baseURL: `${harness.gateway.url}/openai/v1`, maxRetries: 0 });
    const body = {
      model: "gpt-test",
      messages: [
        { role: "developer" as const, content: "Answer in JSON." },
        { role: "user" as const, content: "Über 😀 caf\u00e9" },
      ],
      response_format: { type: "json_schema" as const, json_schema: { name: "answer", schema, strict: true } },
      temperature: 0.2,
      vendor_extension: { keep: true },
    };
    const { data, response } = await counting.chat.completions.create(body).withResponse();
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(harness.upstream.received).toHaveLength(1);
    expect(harness.upstream.received[0]?.url).toBe("/openai/v1/chat/completions");
    expect(JSON.parse(harness.upstream.received[0]?.body ?? "")).toEqual(body);
    expect(harness.upstream.received[0]?.headers.authorization).toBe("Bearer sk-client");
    expect(response.headers.get("x-promptgate-ref")).toMatch(/^ref_[0-9a-f]{16}$/);
    expect(sizeHeader(response)).toMatchObject({
      check: "preflight",
      system_chars: 15,
      message_chars: 11,
      schema_chars: JSON.stringify(schema).length + "answer".length,
      other_chars: '"vendor_extension":{"keep":true}'.length,
      reserve_chars: 2000,
      limit_chars: 200000,
    });
  });

  it("rejects an oversize chat completion with BadRequestError carrying the code and prompt_size, sending nothing", async () => {
    const error = await client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "x".repeat(18_501) }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(apiError.headers.get("x-should-retry")).toBe("false");
    const promptgate = (apiError.error as { promptgate: { prompt_size: Record<string, unknown> } }).promptgate;
    expect(promptgate.prompt_size).toMatchObject({
      check: "preflight",
      total_chars: 18_501,
      conservative_total_chars: 20_001,
    });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("accepts a call whose preflight lands exactly on the limit", async () => {
    await client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "x".repeat(18_500) }],
    });
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("streams a chat completion through the gateway", async () => {
    const stream = await client.chat.completions.create({
      model: "gpt-test",
      stream: true,
      messages: [{ role: "user", content: "stream please" }],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toContain("stream please");
  });

  it("measures a Responses call and rejects an oversize one", async () => {
    const accepted = await client.responses
      .create({ model: "gpt-test", instructions: "Be brief.", input: "hello" })
      .withResponse();
    expect(sizeHeader(accepted.response)).toMatchObject({ system_chars: 9, message_chars: 5 });
    const error = await client.responses
      .create({ model: "gpt-test", input: [{ role: "user", content: "y".repeat(19_000) }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("streams a Responses call through the gateway", async () => {
    const stream = await client.responses.create({ model: "gpt-test", input: "stream this", stream: true });
    let text = "";
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
    expect(text).toContain("stream this");
  });

  it("lists models through the gateway", async () => {
    const models = await client.models.list();
    expect(models.data.length).toBeGreaterThan(0);
  });

  it("answers an unknown policy with NotFoundError and POLICY_NOT_FOUND", async () => {
    const unknown = new OpenAI({
      apiKey: "k",
      baseURL: `${harness.gateway.url}/policies/no.such.policy/openai/v1`,
      maxRetries: 0,
    });
    const error = await unknown.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("POLICY_NOT_FOUND");
    expect(harness.upstream.received).toHaveLength(0);
  });
});
