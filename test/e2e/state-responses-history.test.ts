import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { heldOutput } from "../support/held-output.js";
import { copyPolicies, estimatingPolicy } from "../support/temp-state.js";

let harness: GatewayUnderTest;

const charsPerToken = 4.5;

beforeAll(async () => {
  const policies = copyPolicies({
    "investigation.estimate.toml": estimatingPolicy("investigation.estimate", charsPerToken),
  });
  harness = await startGatewayUnderTest({ PROMPTGATE_POLICIES: policies });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

function clientFor(policy: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-client",
    baseURL: `${harness.gateway.url}/policies/${policy}/openai/v1`,
    maxRetries: 0,
  });
}

function sizeHeader(response: Response): Record<string, number | string | boolean> {
  return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null");
}

describe("stored Responses history through the gateway, with the openai SDK", () => {
  it("counts a previous_response_id chain's history and rejects the turn that crosses the limit", async () => {
    const client = clientFor("investigation.bounded");
    const turn = 6_500;

    const first = await client.responses.create({ model: "gpt-test", input: "a".repeat(turn) }).withResponse();
    expect(sizeHeader(first.response)).toMatchObject({ cache_prefix_chars: 0, message_chars: turn });
    const firstHistory = turn + heldOutput(first.data);

    const second = await client.responses
      .create({ model: "gpt-test", input: "b".repeat(turn), previous_response_id: first.data.id })
      .withResponse();
    expect(sizeHeader(second.response)).toMatchObject({
      cache_prefix_chars: firstHistory,
      message_chars: turn,
      total_chars: firstHistory + turn,
    });
    expect(JSON.parse(harness.upstream.received.at(-1)?.body ?? "{}")).toMatchObject({
      previous_response_id: first.data.id,
    });
    const secondHistory = firstHistory + turn + heldOutput(second.data);
    expect(secondHistory).toBeGreaterThan(sizeHeader(second.response).cache_prefix_chars as number);

    harness.upstream.received.length = 0;
    const error = await client.responses
      .create({ model: "gpt-test", input: "c".repeat(turn), previous_response_id: second.data.id })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    const promptgate = (apiError.error as { promptgate: { prompt_size: Record<string, unknown> } }).promptgate;
    expect(promptgate.prompt_size).toMatchObject({
      check: "preflight",
      cache_prefix_chars: secondHistory,
      message_chars: turn,
      total_chars: secondHistory + turn,
      conservative_total_chars: secondHistory + turn + 1_500,
    });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("answers an unknown previous_response_id as OpenAI does (SESSION_NOT_FOUND), sending nothing", async () => {
    const error = await clientFor("investigation.bounded")
      .responses.create({ model: "gpt-test", input: "hi", previous_response_id: "resp_never_seen" })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(refused.code).toBe("previous_response_not_found");
    expect(refused.param).toBe("previous_response_id");
    expect(refused.message).toContain("Previous response with id 'resp_never_seen' not found.");
    expect((refused.error as { promptgate: { code: string } }).promptgate.code).toBe("SESSION_NOT_FOUND");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("keeps no session of a response created with store: false", async () => {
    const client = clientFor("investigation.bounded");
    const unstored = await client.responses.create({ model: "gpt-test", input: "transient", store: false });
    const error = await client.responses
      .create({ model: "gpt-test", input: "next", previous_response_id: unstored.id })
      .catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("previous_response_not_found");
  });

  it("counts the history of a streamed turn in the next turn", async () => {
    const client = clientFor("investigation.bounded");
    const stream = await client.responses.create({ model: "gpt-test", input: "s".repeat(300), stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === "response.completed") completed = event.response;
    expect(completed).toBeDefined();
    const next = await client.responses
      .create({ model: "gpt-test", input: "and then?", previous_response_id: completed?.id })
      .withResponse();
    expect(sizeHeader(next.response)).toMatchObject({
      cache_prefix_chars: 300 + heldOutput(completed ?? {}),
    });
  });

  it("never estimates a response the gateway did not see made: it may be another principal's (SESSION_NOT_FOUND)", async () => {
    // Stored at the provider directly, under the same provider key, so the gateway holds no record of it.
    const direct = await fetch(`${harness.upstream.origin}/openai/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-test", input: "q".repeat(2_000) }),
    });
    const stored = (await direct.json()) as { id: string };
    harness.upstream.received.length = 0;

    const error = await clientFor("investigation.estimate")
      .responses.create({ model: "gpt-test", input: "go on", previous_response_id: stored.id })
      .catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("previous_response_not_found");
    expect(harness.upstream.received).toHaveLength(0);
  });
});
