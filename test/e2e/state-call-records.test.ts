import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

const adminKey = "state-admin-key";
const marker = "PROMPT-TEXT-MARKER-c41d";
let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({ PROMPTGATE_ADMIN_KEY: adminKey });
});
afterAll(() => harness.close());

type CallRecord = Record<string, unknown> & { preflight?: Record<string, unknown>; provider_check?: unknown };

function client(caseId: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-client",
    baseURL: `${harness.gateway.url}/policies/investigation.bounded/openai/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-promptgate-case": caseId, "x-promptgate-call": "state_check" },
  });
}

/** The record of one call by its ref; records are written without waiting, so it may take a moment. */
async function recordOf(ref: string): Promise<CallRecord> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (response.status === 200) return (await response.json()) as CallRecord;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("No record appeared for the call.");
}

/** Makes a call expected to fail; returns the SDK error. */
async function rejected(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

const refOf = (error: InstanceType<typeof OpenAI.APIError>) => error.headers?.get("x-promptgate-ref") ?? "";
const promptSizeOf = (error: InstanceType<typeof OpenAI.APIError>) =>
  (error.error as { promptgate: { prompt_size: Record<string, unknown> } }).promptgate.prompt_size;

// A schema over 1,500 characters that the system text also carries: the preflight counts it once,
// the provider check counts what is sent, where it stands twice.
const schema = {
  type: "object",
  description: "d".repeat(2_000),
  properties: { answer: { type: "string" } },
  required: ["answer"],
  additionalProperties: false,
};
const schemaChars = JSON.stringify(schema).length;

describe("the call record of a rejected call", () => {
  it("holds both checks' prompt_size when the provider check refused, the decision, and no prompt text", async () => {
    const system = `Answer with JSON matching ${JSON.stringify(schema)}`;
    // The format's name, "answer", counts in both checks with the schema.
    const userChars = 18_500 - Array.from(system).length - "answer".length;
    harness.upstream.received.length = 0;
    const error = await rejected(
      client("records-1").chat.completions.create({
        model: "gpt-test",
        messages: [
          { role: "system", content: system },
          { role: "user", content: marker + "u".repeat(userChars - marker.length) },
        ],
        response_format: { type: "json_schema", json_schema: { name: "answer", schema, strict: true } },
      }),
    );
    expect(error.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(promptSizeOf(error)).toMatchObject({ check: "provider", total_chars: 18_500 + schemaChars });
    expect(harness.upstream.received).toHaveLength(0);

    const record = await recordOf(refOf(error));
    expect(record).toMatchObject({
      ref: refOf(error),
      case: "records-1",
      call_label: "state_check",
      decision: "rejected",
      error: "INVESTIGATION_PROMPT_LIMIT",
      preflight: {
        check: "preflight",
        schema_deduplicated: true,
        schema_chars: "answer".length,
        total_chars: 18_500,
        conservative_total_chars: 20_000,
      },
      provider_check: promptSizeOf(error),
    });
    expect(record.upstream_status).toBeUndefined();
    expect(String(record.policy)).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
    expect(JSON.stringify(record)).not.toContain(marker);
    expect(JSON.stringify(record)).not.toContain("ddddd");
  });

  it("holds the preflight's prompt_size alone when the preflight refused", async () => {
    const error = await rejected(
      client("records-2").chat.completions.create({
        model: "gpt-test",
        messages: [{ role: "user", content: marker + "x".repeat(19_000) }],
      }),
    );
    const record = await recordOf(refOf(error));
    expect(record).toMatchObject({
      decision: "rejected",
      error: "INVESTIGATION_PROMPT_LIMIT",
      preflight: promptSizeOf(error),
    });
    expect(record.provider_check).toBeUndefined();
    expect(JSON.stringify(record)).not.toContain(marker);
  });

  it("records an unknown previous response as a rejection, holding neither its id nor prompt text", async () => {
    const error = await rejected(
      client("records-3").responses.create({ model: "gpt-test", input: marker, previous_response_id: "resp_unknown" }),
    );
    expect(error.code).toBe("previous_response_not_found");
    const record = await recordOf(refOf(error));
    expect(record).toMatchObject({ decision: "rejected", error: "SESSION_NOT_FOUND", case: "records-3" });
    expect(JSON.stringify(record)).not.toContain(marker);
    expect(JSON.stringify(record)).not.toContain("resp_unknown");
  });

  it("lists a case's calls in order, accepted and rejected alike", async () => {
    const accepted = await client("records-4")
      .chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "short" }] })
      .withResponse();
    const error = await rejected(
      client("records-4").chat.completions.create({
        model: "gpt-test",
        messages: [{ role: "user", content: "x".repeat(19_000) }],
      }),
    );
    await recordOf(refOf(error));
    const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls?case=records-4`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const { calls } = (await response.json()) as { calls: CallRecord[] };
    expect(calls.map((call) => [call.ref, call.decision])).toEqual([
      [accepted.response.headers.get("x-promptgate-ref"), "sent"],
      [refOf(error), "rejected"],
    ]);
  });
});
