import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { appUnderTest } from "../support/app-under-test.js";

// A stored Responses turn carries everything the provider puts before the next one: every category of the turn's
// input (encrypted reasoning among them) and every item it answered, not only texts. Through the openai SDK, on Node
// and in workerd (test/http runs in both).

const encrypted = (letter: string) => letter.repeat(4_000);

describe("stored Responses history", () => {
  it("counts encrypted reasoning sent and answered, and refuses the turn the provider's held items push over", async () => {
    let answered = 0;
    const sent: unknown[] = [];
    const { app } = await appUnderTest({}, undefined, async (request) => {
      sent.push(await request.json());
      answered++;
      return Response.json({
        id: `resp_${answered}`,
        object: "response",
        status: "completed",
        model: "gpt-test",
        output: [
          { type: "reasoning", id: `rs_${answered}`, summary: [], encrypted_content: encrypted("r") },
          {
            type: "message",
            id: `msg_${answered}`,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "o".repeat(100), annotations: [] }],
          },
        ],
      });
    });
    const client = new OpenAI({
      apiKey: "sk-client",
      baseURL: "http://gateway.test/policies/investigation.bounded/openai/v1",
      maxRetries: 0,
      fetch: async (url, init) => app.request(String(url), init as RequestInit),
    });
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: "user", content: "u".repeat(500) },
      { type: "reasoning", id: "rs_client", summary: [], encrypted_content: encrypted("e") },
    ];
    const first = await client.responses.create({ model: "gpt-test", input });
    const second = await client.responses.create({ model: "gpt-test", input, previous_response_id: first.id });
    // What the provider holds after two turns: their inputs and answers, ids and members aside.
    const held = 2 * (500 + 4_000 + 4_000 + 100);
    const error = await client.responses
      .create({ model: "gpt-test", input, previous_response_id: second.id })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(refused.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    const size = (refused.error as { promptgate: { prompt_size: { cache_prefix_chars: number } } }).promptgate
      .prompt_size;
    expect(size.cache_prefix_chars).toBeGreaterThanOrEqual(held);
    expect(sent).toHaveLength(2);
  });
});
