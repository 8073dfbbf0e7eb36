import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies } from "../support/temp-state.js";

// The checks a policy makes on a call's schema and answer beyond the window (issue 17): the schemas it accepts, a
// case's cap on invalid answers, citations checked against a registered source index, and the diagnostics of an
// answer the provider cut short. Driven through the `openai` SDK against the recording fake upstream.

const adminKey = "admin-key-answer-checks";
const gatewayKey = "gk-answer-checks";

const citedAnswer = {
  type: "object",
  additionalProperties: false,
  required: ["answer", "citations"],
  properties: {
    answer: { type: "string" },
    citations: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["source_id"],
        properties: { source_id: { type: "string" } },
      },
    },
  },
};

const checkedPolicy = `
name = "answers.checked"
[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0
[validation]
enabled = true
on_invalid = "annotate"
max_invalid_per_case = 2
schemas = ["cited_answer"]
`;

const strictPolicy = `
name = "answers.strict"
[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0
[validation]
enabled = true
on_invalid = "error"
[citations]
at = "/findings/*/citations"
field = "id"
`;

let harness: GatewayUnderTest;

beforeAll(async () => {
  const schemas = mkdtempSync(join(tmpdir(), "promptgate-schemas-"));
  cpSync("schemas", schemas, { recursive: true });
  writeFileSync(join(schemas, "cited_answer.json"), JSON.stringify(citedAnswer));
  harness = await startGatewayUnderTest({
    PROMPTGATE_POLICIES: copyPolicies({ "answers.checked.toml": checkedPolicy, "answers.strict.toml": strictPolicy }),
    PROMPTGATE_SCHEMAS: schemas,
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_KEYS: gatewayKey,
    OPENAI_API_KEY: "sk-server-held",
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

function openAI(policy: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: gatewayKey,
    baseURL: `${harness.gateway.url}/policies/${policy}/openai/v1`,
    maxRetries: 0,
    defaultHeaders: headers,
  });
}

/** The provider answers every call with this content and finish reason. */
function upstreamAnswers(content: string, finishReason = "stop"): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1_700_000_000,
        model: "gpt-test",
        choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: finishReason }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
}

function call(schema: unknown = citedAnswer, extra: Record<string, unknown> = {}) {
  return {
    model: "gpt-test",
    messages: [{ role: "user" as const, content: "Answer with sources." }],
    response_format: { type: "json_schema" as const, json_schema: { name: "cited_answer", schema: schema as never } },
    ...extra,
  };
}

async function rejection(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

function promptgateOf(error: InstanceType<typeof OpenAI.APIError>): Record<string, unknown> {
  return (error.error as { promptgate: Record<string, unknown> }).promptgate;
}

async function admin(path: string, method = "GET"): Promise<Response> {
  return fetch(`${harness.gateway.url}/promptgate/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}` },
  });
}

async function recordOf(ref: string | null): Promise<CallRecord> {
  return (await (await admin(`/calls/${ref}`)).json()) as CallRecord;
}

async function putSources(id: string, sources: unknown, key = gatewayKey): Promise<Response> {
  return fetch(`${harness.gateway.url}/promptgate/window/sources/${id}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ sources }),
  });
}

describe("a policy that names the schemas it accepts", () => {
  it("passes a call whose schema is a listed one, sent natively with any key order", async () => {
    upstreamAnswers(JSON.stringify({ answer: "yes", citations: [{ source_id: "D1" }] }));
    const reordered = Object.fromEntries(Object.entries(citedAnswer).reverse());
    await openAI("answers.checked").chat.completions.create(call(reordered));
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("refuses a call with another schema, or another named one, with INVALID_REQUEST and sends nothing", async () => {
    const other = { ...citedAnswer, required: ["answer"] };
    const error = await rejection(openAI("answers.checked").chat.completions.create(call(other)));
    expect(error.status).toBe(400);
    expect(promptgateOf(error).code).toBe("INVALID_REQUEST");
    expect(error.message).toContain("cited_answer");
    const named = openAI("answers.checked", { "x-promptgate-schema": "investigation_bootstrap_v22" });
    const v22 = await rejection(named.chat.completions.create({ ...call(), response_format: undefined }));
    expect(promptgateOf(v22).code).toBe("INVALID_REQUEST");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("passes a call without a response schema", async () => {
    upstreamAnswers("plain text");
    await openAI("answers.checked").chat.completions.create({ ...call(), response_format: undefined });
    expect(harness.upstream.received).toHaveLength(1);
  });
});

describe("the invalid-answer cap of a case", () => {
  it("counts invalid answers per case, refuses the case's calls at the cap until an admin resets it", async () => {
    const caseId = `case-cap-${Date.now()}`;
    const client = openAI("answers.checked", { "x-promptgate-case": caseId });
    upstreamAnswers(JSON.stringify({ answer: 42 }));
    for (let index = 0; index < 2; index += 1) {
      const response = await client.chat.completions.create(call()).withResponse();
      expect(response.response.headers.get("x-promptgate-validation")).toBe("invalid");
    }
    expect(harness.upstream.received).toHaveLength(2);
    const state = await (await admin(`/cases/${encodeURIComponent(caseId)}`)).json();
    expect(state.policies).toEqual([expect.objectContaining({ name: "answers.checked", invalid_answers: 2 })]);

    const capped = await rejection(client.chat.completions.create(call()));
    expect(capped.status).toBe(400);
    expect(promptgateOf(capped)).toMatchObject({ code: "INVALID_ANSWER_LIMIT", retryable: false });
    expect(harness.upstream.received).toHaveLength(2);
    expect((await recordOf(capped.headers?.get("x-promptgate-ref") ?? null)).decision).toBe("rejected");

    // Another case, and a valid answer's case, are not held back by this one.
    upstreamAnswers(JSON.stringify({ answer: "ok", citations: [{ source_id: "D1" }] }));
    await openAI("answers.checked", { "x-promptgate-case": `${caseId}-other` }).chat.completions.create(call());

    const reset = await admin(`/cases/${encodeURIComponent(caseId)}/invalid-answers`, "DELETE");
    expect(reset.status).toBe(200);
    expect((await reset.json()).policies[0].invalid_answers).toBe(0);
    await client.chat.completions.create(call());
    expect(harness.upstream.received).toHaveLength(4);
  });

  it("does not count a repaired or valid answer, and needs the admin key to reset", async () => {
    const caseId = `case-valid-${Date.now()}`;
    upstreamAnswers(JSON.stringify({ answer: "ok", citations: [{ source_id: "D1" }] }));
    await openAI("answers.checked", { "x-promptgate-case": caseId }).chat.completions.create(call());
    const state = await (await admin(`/cases/${caseId}`)).json();
    expect(state.policies[0].invalid_answers).toBe(0);
    const anonymous = await fetch(`${harness.gateway.url}/promptgate/admin/cases/${caseId}/invalid-answers`, {
      method: "DELETE",
    });
    expect(anonymous.status).toBe(401);
  });
});

describe("citations checked against a source index", () => {
  it("takes unknown and repeated source ids out of the answer before the client sees it, and records them", async () => {
    expect((await putSources("case-7", ["D1", "D2"])).status).toBe(200);
    upstreamAnswers(
      JSON.stringify({
        answer: "The loop stops.",
        citations: [{ source_id: "D1" }, { source_id: "D9" }, { source_id: "D1" }, { source_id: "D2" }],
      }),
    );
    const client = openAI("answers.checked", { "x-promptgate-sources": "case-7" });
    const { data, response } = await client.chat.completions.create(call()).withResponse();
    expect(JSON.parse(data.choices[0]?.message.content ?? "null")).toEqual({
      answer: "The loop stops.",
      citations: [{ source_id: "D1" }, { source_id: "D2" }],
    });
    expect(response.headers.get("x-promptgate-citations-removed")).toBe("2");
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    const record = await recordOf(response.headers.get("x-promptgate-ref"));
    expect(record.citations_removed).toEqual([
      { path: "/citations/1", source_id: "D9", reason: "unknown" },
      { path: "/citations/2", source_id: "D1", reason: "duplicate" },
    ]);
    expect(JSON.stringify(record)).not.toContain("The loop stops.");
  });

  it("validates what the client gets: an answer left without citations is invalid under the schema", async () => {
    await putSources("case-8", ["D1"]);
    upstreamAnswers(JSON.stringify({ answer: "x", citations: [{ source_id: "D5" }] }));
    const client = openAI("answers.checked", { "x-promptgate-sources": "case-8" });
    const { data, response } = await client.chat.completions.create(call()).withResponse();
    expect(response.headers.get("x-promptgate-validation")).toBe("invalid");
    const annotated = data as unknown as { promptgate: { validation: { errors: { validation_keyword: string }[] } } };
    expect(annotated.promptgate.validation.errors[0]?.validation_keyword).toBe("minItems");
  });

  it("checks at the policy's pointer and member", async () => {
    await putSources("strict-1", ["S1"]);
    upstreamAnswers(JSON.stringify({ findings: [{ citations: [{ id: "S1" }, { id: "S2" }] }, { citations: ["S1"] }] }));
    const client = openAI("answers.strict", { "x-promptgate-sources": "strict-1" });
    const { data } = await client.chat.completions.create({ ...call(), response_format: undefined }).withResponse();
    expect(JSON.parse(data.choices[0]?.message.content ?? "null")).toEqual({
      findings: [{ citations: [{ id: "S1" }] }, { citations: [] }],
    });
  });

  it("refuses an unknown index, another caller's index, a malformed id and a stream, sending nothing", async () => {
    await putSources("theirs", ["D1"], "another-key");
    for (const [id, extra] of [
      ["nobody-registered-this", {}],
      ["theirs", {}],
      ["bad id!", {}],
      ["case-7", { stream: true }],
    ] as const) {
      const client = openAI("answers.checked", { "x-promptgate-sources": id });
      const error = await rejection(client.chat.completions.create(call(citedAnswer, extra) as never));
      expect(error.status).toBe(400);
      expect(promptgateOf(error).code).toBe("INVALID_REQUEST");
      expect((error.error as { param?: string }).param).toBe("x-promptgate-sources");
    }
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses a malformed source index", async () => {
    expect((await putSources("bad", "D1")).status).toBe(400);
    expect((await putSources("bad", [""])).status).toBe(400);
    expect((await putSources("bad", [1])).status).toBe(400);
    expect((await putSources("bad", ["x".repeat(201)])).status).toBe(400);
    expect((await putSources("bad", ["D1"], "wrong")).status).toBe(401);
  });
});

describe("an answer the provider cut short", () => {
  it("gets the full-schema diagnostics of what came back, with the reason and no answer text", async () => {
    upstreamAnswers('{"answer":"The loop stops after SECRET-CUT-VALUE', "length");
    const error = await rejection(openAI("answers.strict").chat.completions.create(call()));
    expect(error.status).toBe(422);
    const diagnostics = promptgateOf(error).diagnostics as { errors: Record<string, unknown>[] };
    expect(diagnostics.errors[0]).toMatchObject({ validation_path: "", validation_keyword: "incomplete" });
    expect(String(diagnostics.errors[0]?.hint)).toContain("length");
    expect(diagnostics.errors[1]).toMatchObject({
      validation_path: "",
      validation_keyword: "required",
      validation_fields: ["answer", "citations"],
    });
    expect(JSON.stringify(error.error)).not.toContain("SECRET-CUT-VALUE");
  });

  it("keeps the ordinary diagnostics of an answer that ended as it should", async () => {
    upstreamAnswers('{"answer":"x"', "stop");
    const error = await rejection(openAI("answers.strict").chat.completions.create(call()));
    const diagnostics = promptgateOf(error).diagnostics as { errors: Record<string, unknown>[] };
    expect(diagnostics.errors.map((failure) => failure.validation_keyword)).toEqual(["json"]);
  });
});
