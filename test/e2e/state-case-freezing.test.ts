import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies, editPolicy, tempDatabase, withLimit } from "../support/temp-state.js";

let harness: GatewayUnderTest;
/** The ref C1 froze before the policy file changed, and the ref the changed file has. */
let oldRef: string;
let newRef: string;

type PromptSize = Record<string, unknown> & { policy: string; limit_chars: number };

function clientFor(policyRef: string, caseId: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-client",
    baseURL: `${harness.gateway.url}/policies/${policyRef}/openai/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-promptgate-case": caseId },
  });
}

/** One chat call of `chars` characters for a case; the preflight prompt_size it got. */
async function sizeOfCall(policyRef: string, caseId: string, chars = 10): Promise<PromptSize> {
  const { response } = await clientFor(policyRef, caseId)
    .chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "x".repeat(chars) }] })
    .withResponse();
  return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null");
}

async function listedRefs(): Promise<string[]> {
  const response = await fetch(`${harness.gateway.url}/promptgate/policies`);
  const body = (await response.json()) as { policies: { ref: string }[] };
  return body.policies.map((policy) => policy.ref);
}

beforeAll(async () => {
  const policies = copyPolicies();
  const database = tempDatabase();
  const environment = { PROMPTGATE_POLICIES: policies, PROMPTGATE_DB: database };
  harness = await startGatewayUnderTest(environment);
  oldRef = (await sizeOfCall("investigation.bounded", "C1")).policy;
  await harness.close();

  editPolicy(policies, "investigation.bounded.toml", withLimit(30_000));
  harness = await startGatewayUnderTest(environment);
  newRef = (await sizeOfCall("investigation.bounded", "C2")).policy;
});
afterAll(() => harness.close());

describe("case freezing across a policy change and a restart on the same SQLite file", () => {
  it("names the version a case's first call froze in prompt_size.policy", () => {
    expect(oldRef).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
    expect(newRef).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
    expect(newRef).not.toBe(oldRef);
  });

  it("keeps a frozen case on its old version and old limit", async () => {
    expect(await sizeOfCall("investigation.bounded", "C1")).toMatchObject({ policy: oldRef, limit_chars: 20_000 });
  });

  it("gives a new case the changed file's version and limit", async () => {
    expect(await sizeOfCall("investigation.bounded", "C2")).toMatchObject({ policy: newRef, limit_chars: 30_000 });
  });

  it("holds a frozen case to its old limit where a new case passes", async () => {
    harness.upstream.received.length = 0;
    const error = await sizeOfCall("investigation.bounded", "C1", 19_000).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(harness.upstream.received).toHaveLength(0);
    expect(await sizeOfCall("investigation.bounded", "C2", 19_000)).toMatchObject({ policy: newRef });
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("refuses a frozen case pinned to the other version with 409 POLICY_MISMATCH, sending nothing", async () => {
    harness.upstream.received.length = 0;
    const error = await sizeOfCall(newRef, "C1").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.ConflictError);
    const conflict = error as InstanceType<typeof OpenAI.ConflictError>;
    expect(conflict.status).toBe(409);
    expect(conflict.code).toBe("POLICY_MISMATCH");
    expect(conflict.headers.get("x-should-retry")).toBe("false");
    expect(conflict.error).toMatchObject({
      type: expect.any(String),
      code: "POLICY_MISMATCH",
      promptgate: { code: "POLICY_MISMATCH", retryable: false },
    });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("renders POLICY_MISMATCH in Gemini's native error shape on the Gemini surface", async () => {
    const response = await fetch(
      `${harness.gateway.url}/policies/${newRef}/gemini/v1beta/models/gemini-test:generateContent`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": "k", "x-promptgate-case": "C1" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      },
    );
    expect(response.status).toBe(409);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      code: 409,
      status: expect.any(String),
      message: expect.any(String),
      details: [expect.objectContaining({ reason: "POLICY_MISMATCH" })],
      promptgate: { code: "POLICY_MISMATCH" },
    });
  });

  it("accepts a frozen case pinned to its own old version", async () => {
    expect(await sizeOfCall(oldRef, "C1")).toMatchObject({ policy: oldRef, limit_chars: 20_000 });
  });

  it("freezes the old version for a new case whose first call pins it", async () => {
    expect(await sizeOfCall(oldRef, "C3")).toMatchObject({ policy: oldRef });
    expect(await sizeOfCall("investigation.bounded", "C3")).toMatchObject({ policy: oldRef });
  });

  it("freezes each policy name of a case on its own", async () => {
    const interpretation = await sizeOfCall("case.interpretation", "C1");
    expect(interpretation.policy).toMatch(/^case\.interpretation@[0-9a-f]{12}$/);
    expect(await sizeOfCall("investigation.bounded", "C1")).toMatchObject({ policy: oldRef });
  });

  it("lists both versions of the policy after the restart", async () => {
    const refs = await listedRefs();
    expect(refs).toContain(oldRef);
    expect(refs).toContain(newRef);
  });

  it.each([
    ["empty", ""],
    ["257 characters long", "c".repeat(257)],
  ])("refuses a case id that is %s with INVALID_REQUEST, sending nothing", async (_what, caseId) => {
    harness.upstream.received.length = 0;
    const error = await sizeOfCall("investigation.bounded", caseId).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("INVALID_REQUEST");
    expect(harness.upstream.received).toHaveLength(0);
  });
});
