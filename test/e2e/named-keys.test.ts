import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies, editPolicy, tempDatabase, withLimit } from "../support/temp-state.js";

const adminKey = "named-keys-admin-key";
const serverKeys = {
  OPENAI_API_KEY: "sk-server-openai-named-000111",
  GEMINI_API_KEY: "AIzaServerGeminiNamed000222",
  ANTHROPIC_API_KEY: "sk-ant-server-named-333",
};
const teamCredential = "sk-team-a-openai-distinct-444";

/** Every secret a key was made or rotated with, as the admin API answered it. */
const secretsMade: string[] = [];
/** Every error body a client got, checked for secrets at the end. */
const errorBodies: string[] = [];

let harness: GatewayUnderTest;
let database: string;

beforeAll(async () => {
  database = tempDatabase();
  harness = await startGatewayUnderTest({
    PROMPTGATE_KEY_MODE: "keys",
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_DB: database,
    OPENAI_API_KEY_TEAM_A: teamCredential,
    ...serverKeys,
  });
});
afterAll(() => harness?.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

interface CreatedKey {
  id: string;
  key: string;
  name: string;
  team: string | null;
  policies: string[];
  models: string[];
  expires_at: string | null;
}

function admin(gateway: GatewayUnderTest, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gateway.gateway.url}/promptgate/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json", ...init.headers },
  });
}

async function createKey(settings: Record<string, unknown>): Promise<CreatedKey> {
  const response = await admin(harness, "/keys", { method: "POST", body: JSON.stringify(settings) });
  const text = await response.text();
  expect(response.status, text).toBe(201);
  const created = JSON.parse(text) as CreatedKey;
  expect(created.key).toMatch(/^pg_/);
  secretsMade.push(created.key);
  return created;
}

async function rotateKey(id: string, graceSeconds: number): Promise<string> {
  const response = await admin(harness, `/keys/${id}/rotate`, {
    method: "POST",
    body: JSON.stringify({ grace_seconds: graceSeconds }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const rotated = JSON.parse(text) as { id: string; key: string };
  expect(rotated.id).toBe(id);
  secretsMade.push(rotated.key);
  return rotated.key;
}

async function revokeKey(id: string): Promise<void> {
  const response = await admin(harness, `/keys/${id}`, { method: "DELETE" });
  expect(response.status).toBe(200);
  expect(((await response.json()) as { revoked_at: string | null }).revoked_at).not.toBeNull();
}

async function callRecord(gateway: GatewayUnderTest, ref: string | null): Promise<CallRecord> {
  expect(ref).toMatch(/^ref_/);
  const response = await admin(gateway, `/calls/${ref}`);
  expect(response.status).toBe(200);
  return (await response.json()) as CallRecord;
}

const base = (policy?: string) => `${harness.gateway.url}${policy === undefined ? "" : `/policies/${policy}`}`;

function openai(secret: string, policy?: string): OpenAI {
  return new OpenAI({ apiKey: secret, baseURL: `${base(policy)}/openai/v1`, maxRetries: 0 });
}

function gemini(secret: string, policy?: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey: secret, httpOptions: { baseUrl: `${base(policy)}/gemini` } });
}

function anthropic(secret: string, policy?: string): Anthropic {
  return new Anthropic({ apiKey: secret, baseURL: `${base(policy)}/anthropic`, maxRetries: 0 });
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to be refused");
    },
    (error: unknown) => error,
  );
}

/** A chat completion through fetch: its status and text, for polling and for the error-body check. */
async function rawChat(secret: string, model = "gpt-4.1"): Promise<{ status: number; text: string }> {
  const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }] }),
  });
  const text = await response.text();
  errorBodies.push(...(response.status === 200 ? [] : [text]));
  return { status: response.status, text };
}

function expectUnauthenticated(answer: { status: number; text: string }): void {
  expect(answer.status).toBe(401);
  expect(JSON.parse(answer.text)).toMatchObject({ error: { code: "authentication" } });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function answerJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

describe("a key bound to investigation.bounded", () => {
  let bound: CreatedKey;
  beforeAll(async () => {
    bound = await createKey({
      name: "bound-ci",
      team: "team-bound",
      policies: ["investigation.bounded"],
      models: ["gpt-4.1*", "gemini-2.5-*", "claude-haiku-*"],
    });
  });

  it("is refused 403 POLICY_NOT_ALLOWED by the openai SDK under another policy's prefix, naming its policy", async () => {
    const error = await rejectionOf(
      openai(bound.key, "default").chat.completions.create({
        model: "gpt-4.1",
        messages: [{ role: "user", content: "hello" }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const denied = error as InstanceType<typeof OpenAI.PermissionDeniedError>;
    expect(denied.status).toBe(403);
    expect(denied.code).toBe("POLICY_NOT_ALLOWED");
    expect(denied.error).toMatchObject({
      type: expect.any(String),
      message: expect.stringContaining("investigation.bounded"),
      promptgate: { code: "POLICY_NOT_ALLOWED", retryable: false },
    });
    errorBodies.push(JSON.stringify(denied.error));
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("is refused 403 POLICY_NOT_ALLOWED by the Gemini SDK as a PERMISSION_DENIED ApiError", async () => {
    const error = await rejectionOf(
      gemini(bound.key, "default").models.generateContent({ model: "gemini-2.5-flash", contents: "hello" }),
    );
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.status).toBe(403);
    const body = JSON.parse(apiError.message) as {
      error: { code: number; status: string; message: string; details: { reason: string }[] };
    };
    expect(body.error).toMatchObject({ code: 403, status: "PERMISSION_DENIED" });
    expect(body.error.details[0]?.reason).toBe("POLICY_NOT_ALLOWED");
    expect(body.error.message).toContain("investigation.bounded");
    errorBodies.push(apiError.message);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("is refused 403 POLICY_NOT_ALLOWED by the Anthropic SDK as a permission_error", async () => {
    const error = await rejectionOf(
      anthropic(bound.key, "default").messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 16,
        messages: [{ role: "user", content: "hello" }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
    const denied = error as InstanceType<typeof Anthropic.PermissionDeniedError>;
    expect(denied.status).toBe(403);
    expect(denied.error).toMatchObject({
      type: "error",
      error: {
        type: "permission_error",
        code: "POLICY_NOT_ALLOWED",
        message: expect.stringContaining("investigation.bounded"),
      },
    });
    errorBodies.push(JSON.stringify(denied.error));
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("is refused a pinned version of another policy too, and accepts a pinned version of its own", async () => {
    const listing = (await (await fetch(`${harness.gateway.url}/promptgate/policies`)).json()) as {
      policies: { name: string; ref: string; current: boolean }[];
    };
    const refOf = (name: string) => listing.policies.find((policy) => policy.name === name && policy.current)?.ref;
    const other = refOf("default");
    const own = refOf("investigation.bounded");
    expect(other).toContain("@");
    expect(own).toContain("@");
    const chat = { model: "gpt-4.1", messages: [{ role: "user" as const, content: "hello" }] };
    const error = await rejectionOf(openai(bound.key, other).chat.completions.create(chat));
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("POLICY_NOT_ALLOWED");
    expect(harness.upstream.received).toHaveLength(0);
    const { response } = await openai(bound.key, own).chat.completions.create(chat).withResponse();
    expect((await callRecord(harness, response.headers.get("x-promptgate-ref"))).policy).toBe(own);
  });

  it("runs a call without a policy prefix under the key's first policy", async () => {
    const { data, response } = await openai(bound.key)
      .chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "hello" }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(harness.upstream.received).toHaveLength(1);
    const record = await callRecord(harness, response.headers.get("x-promptgate-ref"));
    expect(record.policy).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
  });

  it("answers under its own policy's prefix with each SDK", async () => {
    const completion = await openai(bound.key, "investigation.bounded").chat.completions.create({
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: "hello" }],
    });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    const generated = await gemini(bound.key, "investigation.bounded").models.generateContent({
      model: "gemini-2.5-flash",
      contents: "hello",
    });
    expect(generated.text).toBeTruthy();
    const message = await anthropic(bound.key, "investigation.bounded").messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 16,
      messages: [{ role: "user", content: "hello" }],
    });
    expect(message.content.length).toBeGreaterThan(0);
    expect(harness.upstream.received).toHaveLength(3);
  });

  it("is refused 403 MODEL_NOT_ALLOWED for a model outside its globs in each SDK, naming the globs, sending nothing", async () => {
    const openaiError = await rejectionOf(
      openai(bound.key).chat.completions.create({ model: "gpt-5", messages: [{ role: "user", content: "hello" }] }),
    );
    expect(openaiError).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const denied = openaiError as InstanceType<typeof OpenAI.PermissionDeniedError>;
    expect(denied.code).toBe("MODEL_NOT_ALLOWED");
    expect(denied.error).toMatchObject({
      message: expect.stringContaining("gpt-4.1*"),
      param: "model",
      promptgate: { code: "MODEL_NOT_ALLOWED", retryable: false },
    });
    errorBodies.push(JSON.stringify(denied.error));

    const geminiError = await rejectionOf(
      gemini(bound.key).models.generateContent({ model: "gemini-2.0-flash", contents: "hello" }),
    );
    expect(geminiError).toBeInstanceOf(ApiError);
    expect((geminiError as ApiError).status).toBe(403);
    const geminiBody = JSON.parse((geminiError as ApiError).message) as {
      error: { status: string; details: { reason: string }[] };
    };
    expect(geminiBody.error.status).toBe("PERMISSION_DENIED");
    expect(geminiBody.error.details[0]?.reason).toBe("MODEL_NOT_ALLOWED");

    const anthropicError = await rejectionOf(
      anthropic(bound.key).messages.create({
        model: "claude-opus-test",
        max_tokens: 16,
        messages: [{ role: "user", content: "hello" }],
      }),
    );
    expect(anthropicError).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((anthropicError as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toMatchObject({
      error: {
        type: "permission_error",
        code: "MODEL_NOT_ALLOWED",
        message: expect.stringContaining("claude-haiku-*"),
      },
    });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("is refused MODEL_NOT_ALLOWED for a model of another provider reached through the openai SDK", async () => {
    const error = await rejectionOf(
      openai(bound.key).chat.completions.create({
        model: "claude-sonnet-4-5",
        messages: [{ role: "user", content: "hello" }],
      }),
    );
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("MODEL_NOT_ALLOWED");
    expect(harness.upstream.received).toHaveLength(0);
    const routed = await openai(bound.key).chat.completions.create({
      model: "claude-haiku-4-5",
      messages: [{ role: "user", content: "hello" }],
    });
    expect(routed.choices[0]?.message.content).toBeTruthy();
    expect(harness.upstream.received.map((request) => request.url)).toEqual(["/anthropic/v1/messages"]);
  });

  it("lists on GET /models only the models its globs allow", async () => {
    const listed: string[] = [];
    for await (const model of openai(bound.key).models.list()) listed.push(model.id);
    expect(listed).toContain("claude-haiku-4-5");
    expect(listed).toContain("gemini-2.5-flash");
    for (const id of listed) expect(id).toMatch(/^(gpt-4\.1.*|gemini-2\.5-.*|claude-haiku-.*)$/);
  });

  it("filters the call listing on the key's id and on its team", async () => {
    const { response } = await openai(bound.key)
      .chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "filtered" }] })
      .withResponse();
    const ref = response.headers.get("x-promptgate-ref");
    for (const query of [`key=${bound.id}`, "team=team-bound"]) {
      const answer = await admin(harness, `/calls?${query}`);
      expect(answer.status).toBe(200);
      const page = (await answer.json()) as { calls: CallRecord[] };
      expect(page.calls.map((call) => call.ref)).toContain(ref);
      for (const call of page.calls) expect(call.key?.id).toBe(bound.id);
    }
  });

  it("keeps the key's id, name and team on the call record, and never its secret", async () => {
    const { response } = await openai(bound.key)
      .chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "attributed" }] })
      .withResponse();
    const record = await callRecord(harness, response.headers.get("x-promptgate-ref"));
    expect(record.key).toEqual({ id: bound.id, name: "bound-ci", team: "team-bound" });
    expect(JSON.stringify(record)).not.toContain(bound.key);
  });

  it("keeps the key on the record of a refused call too", async () => {
    const response = await fetch(`${base("default")}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${bound.key}` },
      body: JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(response.status).toBe(403);
    errorBodies.push(await response.text());
    const record = await callRecord(harness, response.headers.get("x-promptgate-ref"));
    expect(record).toMatchObject({ error: "POLICY_NOT_ALLOWED", key: { id: bound.id, name: "bound-ci" } });
  });
});

describe("fallbacks of a key's calls", () => {
  function geminiUnavailable(): void {
    harness.upstream.answerWith((request, response) => {
      if (request.url.startsWith("/gemini/")) {
        answerJson(response, 503, { error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } });
        return;
      }
      answerJson(response, 200, {
        id: "msg_fallback",
        type: "message",
        role: "assistant",
        model: "claude-haiku-4-5",
        content: [{ type: "text", text: "From the fallback." }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 4 },
      });
    });
  }

  it("never tries a fallback outside the key's globs: the client gets the first failure, one request went out", async () => {
    const narrow = await createKey({ name: "fast-only", models: ["fast", "gemini-*"] });
    geminiUnavailable();
    const error = await rejectionOf(
      openai(narrow.key).chat.completions.create({ model: "fast", messages: [{ role: "user", content: "hello" }] }),
    );
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(harness.upstream.received.map((request) => request.url)).toEqual([
      "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
    ]);
  });

  it("tries the fallback for a key whose globs include it", async () => {
    const wide = await createKey({ name: "fast-and-claude", models: ["fast", "claude-*"] });
    geminiUnavailable();
    const { data, response } = await openai(wide.key)
      .chat.completions.create({ model: "fast", messages: [{ role: "user", content: "hello" }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("From the fallback.");
    expect(response.headers.get("x-promptgate-model-fallback")).toBe("fast_to_claude-haiku-4-5");
    expect(harness.upstream.received).toHaveLength(2);
  });
});

describe("a session's model and the key's globs", () => {
  it("refuses to continue a session whose model the key's globs no longer allow, sending nothing", async () => {
    const narrowing = await createKey({ name: "narrowing", models: ["gpt-4.1*", "gpt-5*"] });
    const first = await openai(narrowing.key).responses.create({ model: "gpt-4.1", input: "start" });
    const patched = await admin(harness, `/keys/${narrowing.id}`, {
      method: "PATCH",
      body: JSON.stringify({ models: ["gpt-5*"] }),
    });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { models: string[] }).models).toEqual(["gpt-5*"]);
    // The node keeps the key as the store last answered it for a second.
    await sleep(1_100);
    harness.upstream.received.length = 0;
    const error = await rejectionOf(
      openai(narrowing.key).responses.create({
        input: "go on",
        previous_response_id: first.id,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming),
    );
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((error as InstanceType<typeof OpenAI.PermissionDeniedError>).code).toBe("MODEL_NOT_ALLOWED");
    expect(harness.upstream.received).toHaveLength(0);
    const allowed = await openai(narrowing.key).responses.create({ model: "gpt-5", input: "a new one" });
    expect(allowed.output_text.length).toBeGreaterThan(0);
  });
});

describe("revoked and expired keys", () => {
  it("refuses a key revoked before its first use with 401 authentication at once", async () => {
    const doomed = await createKey({ name: "revoked-unused" });
    await revokeKey(doomed.id);
    expectUnauthenticated(await rawChat(doomed.key));
    const error = await rejectionOf(
      anthropic(doomed.key).messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 16,
        messages: [{ role: "user", content: "hello" }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("refuses a key revoked after use on the node that revoked it at once", async () => {
    const used = await createKey({ name: "revoked-after-use" });
    expect((await rawChat(used.key)).status).toBe(200);
    await revokeKey(used.id);
    expectUnauthenticated(await rawChat(used.key));
    const error = await rejectionOf(
      gemini(used.key).models.generateContent({ model: "gemini-2.5-flash", contents: "hello" }),
    );
    expect((error as ApiError).status).toBe(401);
  });

  it("refuses a key once its expires_at has passed with 401 authentication", async () => {
    const expiring = await createKey({
      name: "expiring",
      expires_at: new Date(Date.now() + 1_500).toISOString(),
    });
    expect((await rawChat(expiring.key)).status).toBe(200);
    await sleep(Math.max(0, Date.parse(expiring.expires_at as string) - Date.now()) + 50);
    expectUnauthenticated(await rawChat(expiring.key));
    const error = await rejectionOf(
      openai(expiring.key).chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("refuses a secret no key has with 401 authentication", async () => {
    expectUnauthenticated(await rawChat(`pg_${"0".repeat(64)}`));
  });
});

describe("rotation", () => {
  it("takes both secrets during the grace, continues a session across them, and refuses the old one after it", async () => {
    const rotating = await createKey({ name: "rotating", team: "team-rotate" });
    const old = rotating.key;
    const first = await openai(old).responses.create({ model: "gpt-4.1", input: "before the rotation" });
    const fresh = await rotateKey(rotating.id, 3);
    const rotatedAt = Date.now();
    expect(fresh).not.toBe(old);
    // The key's id is the principal: the session started with the old secret goes on with the new one.
    const next = await openai(fresh)
      .responses.create({
        input: "after the rotation",
        previous_response_id: first.id,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .withResponse();
    expect(next.data.output_text.length).toBeGreaterThan(0);
    const record = await callRecord(harness, next.response.headers.get("x-promptgate-ref"));
    expect(record.key).toEqual({ id: rotating.id, name: "rotating", team: "team-rotate" });
    // Within the grace the old secret still works, and continues the same session.
    expect((await rawChat(old)).status).toBe(200);
    const again = await openai(old).responses.create({
      input: "old secret in the grace",
      previous_response_id: next.data.id,
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(again.output_text.length).toBeGreaterThan(0);
    expect(Date.now() - rotatedAt).toBeLessThan(3_000);
    // After the grace (and the node's one-second cache) the old secret is refused, the new one is not.
    await sleep(Math.max(0, rotatedAt + 3_000 + 1_100 - Date.now()));
    expectUnauthenticated(await rawChat(old));
    expect((await rawChat(fresh)).status).toBe(200);
  });

  it("refuses the earlier secret right after a rotation without grace", async () => {
    const rotating = await createKey({ name: "rotating-no-grace" });
    const fresh = await rotateKey(rotating.id, 0);
    expectUnauthenticated(await rawChat(rotating.key));
    expect((await rawChat(fresh)).status).toBe(200);
  });
});

describe("per-key credentials", () => {
  it("sends the credential the key names instead of the default server-held key", async () => {
    const teamA = await createKey({ name: "team-a", team: "team-a", credentials: { openai: "OPENAI_API_KEY_TEAM_A" } });
    await openai(teamA.key).chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "hi" }] });
    expect(harness.upstream.received[0]?.headers.authorization).toBe(`Bearer ${teamCredential}`);
    expect(JSON.stringify(harness.upstream.received[0]?.headers)).not.toContain(serverKeys.OPENAI_API_KEY);
    // Its other providers, and other keys, keep the defaults.
    await anthropic(teamA.key).messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(harness.upstream.received[1]?.headers["x-api-key"]).toBe(serverKeys.ANTHROPIC_API_KEY);
    const plain = await createKey({ name: "plain" });
    await openai(plain.key).chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "hi" }] });
    expect(harness.upstream.received[2]?.headers.authorization).toBe(`Bearer ${serverKeys.OPENAI_API_KEY}`);
    for (const request of harness.upstream.received) {
      expect(JSON.stringify(request)).not.toContain(teamA.key);
      expect(JSON.stringify(request)).not.toContain(plain.key);
    }
  });

  it("refuses to make a key naming a credential variable that is not set", async () => {
    const response = await admin(harness, "/keys", {
      method: "POST",
      body: JSON.stringify({ name: "team-z", credentials: { openai: "OPENAI_API_KEY_TEAM_Z" } }),
    });
    expect(response.status).toBe(400);
  });
});

describe("usage and last use of a key", () => {
  it("counts a key's calls, refusals, characters and tokens by day, and notes its last use", async () => {
    const counted = await createKey({ name: "counted", team: "team-usage", models: ["gpt-4.1*"] });
    const listedBefore = (await (await admin(harness, `/keys/${counted.id}`)).json()) as { last_used_at: unknown };
    expect(listedBefore.last_used_at).toBeNull();
    const refs: (string | null)[] = [];
    for (const content of ["one", "two two"]) {
      const { response } = await openai(counted.key)
        .chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content }] })
        .withResponse();
      refs.push(response.headers.get("x-promptgate-ref"));
    }
    const refused = await rejectionOf(
      openai(counted.key).chat.completions.create({ model: "gpt-5", messages: [{ role: "user", content: "no" }] }),
    );
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    const records = await Promise.all(refs.map((ref) => callRecord(harness, ref)));
    const chars = records.reduce((sum, record) => sum + (record.provider_check?.conservative_total_chars ?? 0), 0);
    const tokensIn = records.reduce((sum, record) => sum + (record.usage?.input_tokens ?? 0), 0);
    const tokensOut = records.reduce((sum, record) => sum + (record.usage?.output_tokens ?? 0), 0);
    expect(chars).toBeGreaterThan(0);
    expect(tokensIn).toBeGreaterThan(0);
    const today = new Date().toISOString().slice(0, 10);
    const row = {
      day: today,
      key_id: counted.id,
      calls: 3,
      rejected: 1,
      chars,
      tokens_in: tokensIn,
      tokens_out: tokensOut,
    };
    for (const query of [`key=${counted.id}`, "team=team-usage"]) {
      const answer = await admin(
        harness,
        `/usage?${query}&from=${today}&to=${new Date(Date.now() + 60_000).toISOString()}`,
      );
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ data: [row] });
    }
    const listedAfter = (await (await admin(harness, `/keys/${counted.id}`)).json()) as { last_used_at: string | null };
    expect(Date.parse(listedAfter.last_used_at ?? "")).toBeGreaterThan(Date.parse(today));
  });
});

describe("secrets of named keys", () => {
  it("never shows a secret in the key listing or a key object", async () => {
    expect(secretsMade.length).toBeGreaterThan(5);
    const listing = await (await admin(harness, "/keys")).text();
    const ids = (JSON.parse(listing) as { data: { id: string }[] }).data.map((key) => key.id);
    const objects = await Promise.all(ids.map(async (id) => (await admin(harness, `/keys/${id}`)).text()));
    for (const secret of secretsMade) {
      expect(listing).not.toContain(secret);
      for (const object of objects) expect(object).not.toContain(secret);
    }
  });

  it("never writes a secret into a call record, a log line, an error body or the metrics", async () => {
    const records: CallRecord[] = [];
    let before = "";
    for (;;) {
      const page = (await (
        await admin(harness, `/calls?limit=100${before === "" ? "" : `&before=${before}`}`)
      ).json()) as {
        calls: CallRecord[];
        next: string | null;
      };
      records.push(...page.calls);
      if (page.next === null) break;
      before = page.next;
    }
    expect(records.length).toBeGreaterThan(10);
    expect(records.some((record) => record.key !== undefined)).toBe(true);
    const recordText = JSON.stringify(records);
    const metrics = await fetch(`${harness.gateway.url}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(metrics.status).toBe(200);
    const metricsText = await metrics.text();
    expect(harness.logs.length).toBeGreaterThan(10);
    expect(errorBodies.length).toBeGreaterThan(5);
    for (const secret of secretsMade) {
      expect(recordText).not.toContain(secret);
      expect(metricsText).not.toContain(secret);
      for (const line of harness.logs) expect(line).not.toContain(secret);
      for (const body of errorBodies) expect(body).not.toContain(secret);
    }
  });

  it("keeps no secret in clear in the SQLite files", () => {
    const files = [database, `${database}-wal`, `${database}-shm`].filter((path) => existsSync(path));
    expect(files).toContain(database);
    const bytes = Buffer.concat(files.map((path) => readFileSync(path)));
    expect(bytes.length).toBeGreaterThan(0);
    for (const secret of secretsMade) {
      expect(bytes.includes(Buffer.from(secret, "utf8"))).toBe(false);
      expect(bytes.includes(Buffer.from(secret.slice(3), "utf8"))).toBe(false);
    }
    // The store holds each secret's SHA-256 in its place.
    const hashes = secretsMade.map((secret) => createHash("sha256").update(secret).digest("hex"));
    expect(
      hashes.some((hash) => bytes.includes(Buffer.from(hash, "utf8")) || bytes.includes(Buffer.from(hash, "hex"))),
    ).toBe(true);
  });
});

describe("cases of named keys", () => {
  let own: GatewayUnderTest;
  let folder: string;
  beforeAll(async () => {
    folder = copyPolicies();
    own = await startGatewayUnderTest({
      PROMPTGATE_POLICIES: folder,
      PROMPTGATE_KEY_MODE: "keys",
      PROMPTGATE_ADMIN_KEY: adminKey,
      ...serverKeys,
    });
  });
  afterAll(() => own?.close());

  async function keyOn(name: string): Promise<string> {
    const response = await admin(own, "/keys", { method: "POST", body: JSON.stringify({ name }) });
    expect(response.status).toBe(201);
    return ((await response.json()) as { key: string }).key;
  }

  async function casePolicy(secret: string, caseId: string): Promise<string> {
    const response = await fetch(`${own.gateway.url}/policies/investigation.bounded/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}`, "x-promptgate-case": caseId },
      body: JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "{}").policy;
  }

  it("freezes a case's policy version per key: another key's case of the same id starts on the current version", async () => {
    const first = await keyOn("case-first");
    const second = await keyOn("case-second");
    const frozen = await casePolicy(first, "shared-case-id");
    expect(frozen).toMatch(/^investigation\.bounded@/);
    editPolicy(folder, "investigation.bounded.toml", withLimit(25_000));
    expect((await admin(own, "/policies/reload", { method: "POST" })).status).toBe(200);
    const current = await casePolicy(second, "shared-case-id");
    expect(current).toMatch(/^investigation\.bounded@/);
    expect(current).not.toBe(frozen);
    expect(await casePolicy(first, "shared-case-id")).toBe(frozen);
    expect(await casePolicy(second, "shared-case-id")).toBe(current);
  });
});

describe("keys of keys.toml", () => {
  const fileSecret = "pg_file-secret-for-keys-toml-0123456789abcdef";
  const otherSecret = "pg_file-secret-kept-in-keys-toml-fedcba9876543210";
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  let fromFile: GatewayUnderTest;
  let folder: string;

  const keyTable = (name: string, secret: string) => `[[key]]
name = "${name}"
team = "file-team"
policies = ["investigation.bounded"]
secret_sha256 = "${sha256(secret)}"
`;

  beforeAll(async () => {
    folder = copyPolicies({
      "keys.toml": `${keyTable("file-ci", fileSecret)}\n${keyTable("file-kept", otherSecret)}`,
    });
    fromFile = await startGatewayUnderTest({
      PROMPTGATE_POLICIES: folder,
      PROMPTGATE_ADMIN_KEY: adminKey,
      ...serverKeys,
    });
  });
  afterAll(() => fromFile?.close());

  function fileChat(secret: string, policy?: string): Promise<Response> {
    const prefix = policy === undefined ? "" : `/policies/${policy}`;
    return fetch(`${fromFile.gateway.url}${prefix}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "hello" }] }),
    });
  }

  it("turns gateway-key mode on and takes the secret whose SHA-256 the file holds, under the key's policy", async () => {
    const response = await fileChat(fileSecret);
    expect(response.status).toBe(200);
    const record = await callRecord(fromFile, response.headers.get("x-promptgate-ref"));
    expect(record.policy).toMatch(/^investigation\.bounded@/);
    expect(record.key).toMatchObject({ name: "file-ci", team: "file-team" });
    expect((await fileChat("sk-anything")).status).toBe(401);
    expect((await fileChat(fileSecret, "default")).status).toBe(403);
  });

  it("lists the file's keys as read-only and refuses to revoke one with 409", async () => {
    const listing = (await (await admin(fromFile, "/keys")).json()) as { data: { id: string; source: string }[] };
    expect(listing.data.map((key) => key.source)).toEqual(["file", "file"]);
    const response = await admin(fromFile, `/keys/${listing.data[0]?.id}`, { method: "DELETE" });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ error: { code: "KEY_READ_ONLY" } });
    expect((await fileChat(fileSecret)).status).toBe(200);
  });

  it("refuses a secret at once after its key left the file and the policies were reloaded", async () => {
    expect((await fileChat(fileSecret)).status).toBe(200);
    writeFileSync(join(folder, "keys.toml"), keyTable("file-kept", otherSecret));
    const reload = await admin(fromFile, "/policies/reload", { method: "POST" });
    expect(reload.status).toBe(200);
    const refused = await fileChat(fileSecret);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { code: "authentication" } });
    expect((await fileChat(otherSecret)).status).toBe(200);
    // With the file gone the gateway stays in gateway-key mode.
    rmSync(join(folder, "keys.toml"));
    expect((await admin(fromFile, "/policies/reload", { method: "POST" })).status).toBe(200);
    expect((await fileChat(otherSecret)).status).toBe(401);
    expect((await fileChat("sk-anything")).status).toBe(401);
  });

  it("writes neither file secret into a log line or a record", async () => {
    const page = await (await admin(fromFile, "/calls?limit=100")).text();
    for (const secret of [fileSecret, otherSecret]) {
      expect(page).not.toContain(secret);
      for (const line of fromFile.logs) expect(line).not.toContain(secret);
    }
  });
});
