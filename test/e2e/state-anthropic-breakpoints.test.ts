import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

let harness: GatewayUnderTest;
let client: Anthropic;

beforeAll(async () => {
  harness = await startGatewayUnderTest();
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  client = new Anthropic({
    apiKey: "client-key",
    baseURL: `${harness.gateway.url}/policies/investigation.bounded/anthropic`,
    maxRetries: 0,
  });
});

function sizeHeader(response: Response): Record<string, unknown> {
  return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null");
}

const ephemeral = { type: "ephemeral" } as const;
const tool: Anthropic.Tool = {
  name: "lookup",
  description: "Looks a term up.",
  input_schema: { type: "object", properties: { term: { type: "string" } }, required: ["term"] },
};
const toolChars = JSON.stringify(tool).length;

describe("Anthropic cache_control breakpoints through the gateway", () => {
  it("reports everything before the last breakpoint as cache_prefix_chars and counts it once", async () => {
    const { response } = await client.messages
      .create({
        model: "claude-test",
        max_tokens: 64,
        tools: [tool],
        system: [{ type: "text", text: "S".repeat(3_000), cache_control: ephemeral }],
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "D".repeat(5_000) },
              { type: "text", text: "E".repeat(2_000), cache_control: ephemeral },
            ],
          },
          { role: "assistant", content: "ok" },
          { role: "user", content: "Q".repeat(400) },
        ],
      })
      .withResponse();
    const cached = toolChars + 3_000 + 5_000 + 2_000;
    expect(sizeHeader(response)).toMatchObject({
      cache_prefix_chars: cached,
      tool_chars: 0,
      system_chars: 0,
      message_chars: 2 + 400,
      total_chars: cached + 402,
    });
  });

  it("reports only the system before a system breakpoint, leaving the messages in message_chars", async () => {
    const { response } = await client.messages
      .create({
        model: "claude-test",
        max_tokens: 64,
        system: [
          { type: "text", text: "A".repeat(1_000), cache_control: ephemeral },
          { type: "text", text: "B".repeat(100) },
        ],
        messages: [{ role: "user", content: "C".repeat(50) }],
      })
      .withResponse();
    expect(sizeHeader(response)).toMatchObject({
      cache_prefix_chars: 1_000,
      system_chars: 100,
      message_chars: 50,
      total_chars: 1_150,
    });
  });

  it("counts a breakpoint's prefix toward the limit like any other text", async () => {
    const error = await client.messages
      .create({
        model: "claude-test",
        max_tokens: 64,
        system: [{ type: "text", text: "S".repeat(18_000), cache_control: ephemeral }],
        messages: [{ role: "user", content: "x".repeat(501) }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as {
      error: { promptgate: { code: string; prompt_size: Record<string, unknown> } };
    };
    expect(body.error.promptgate.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(body.error.promptgate.prompt_size).toMatchObject({
      cache_prefix_chars: 18_000,
      message_chars: 501,
      total_chars: 18_501,
      conservative_total_chars: 20_001,
    });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("reports no cached prefix without a breakpoint", async () => {
    const { response } = await client.messages
      .create({ model: "claude-test", max_tokens: 64, system: "S", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(sizeHeader(response)).toMatchObject({ cache_prefix_chars: 0, system_chars: 1, message_chars: 2 });
  });
});
