import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { identify } from "../../src/policy/identify-policy.js";
import type { Policy } from "../../src/policy/policy.js";
import { d1Store } from "../../src/runtime/workers/d1-store.js";
import { migrations, namedSchemas, policies } from "../../src/runtime/workers/generated/assets.js";
import { edgeDiagnosticsCases } from "../support/edge-diagnostics.js";

// The worker of wrangler.toml inside workerd, driven through its default export's fetch: OpenAI goes to the
// simulated provider, Gemini to the outbound fake of vitest.workers.config.ts, state to the D1 binding.

const adminKey = "admin-test-key";

type Json = Record<string, unknown>;
type OpenAIError = { error: Json & { promptgate: Json } };

function send(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`http://promptgate.test${path}`, init));
}

function chat(path: string, content: string, headers: Record<string, string> = {}, extra: Json = {}) {
  return send(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }], ...extra }),
  });
}

function promptSizeOf(response: Response): Json & { policy: string; total_chars: number } {
  return JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null");
}

function boundedPolicy(): Policy {
  const found = policies.find((entry) => entry.policy.name === "investigation.bounded");
  if (found === undefined) throw new Error("investigation.bounded is not bundled.");
  return structuredClone(found.policy);
}

function namedSchema(name: string): Json {
  const found = namedSchemas.find(([schemaName]) => schemaName === name);
  if (found === undefined) throw new Error(`${name} is not bundled.`);
  return structuredClone(found[1]) as Json;
}

/** The ref of an earlier investigation.bounded (limit 30,000), stored in D1 before the isolate's first request. */
let earlierRef: string;
let currentRef: string;

beforeAll(async () => {
  const earlier = await identify(
    { ...boundedPolicy(), window: { ...boundedPolicy().window, limit_chars: 30_000 } },
    "",
  );
  await d1Store(env.DB, migrations).savePolicyVersion({ ...earlier, source: "policies/investigation.bounded.toml" });
  earlierRef = earlier.ref;
  currentRef = (await identify(boundedPolicy(), "")).ref;
});

describe("the worker on the simulated provider", () => {
  it("answers an OpenAI chat call with its measured prompt size", async () => {
    const response = await chat("/openai/v1/chat/completions", "hello from the edge");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-ref")).toMatch(/^ref_[0-9a-f]{16}$/);
    expect(response.headers.get("x-promptgate-simulated")).toBe("true");
    expect(promptSizeOf(response)).toMatchObject({ check: "preflight", message_chars: 19, total_chars: 19 });
    expect(String(promptSizeOf(response).policy)).toMatch(/^default@[0-9a-f]{12}$/);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toContain("hello from the edge");
  });

  it("rejects an oversize call with INVESTIGATION_PROMPT_LIMIT in OpenAI's native shape", async () => {
    const response = await chat("/policies/investigation.bounded/openai/v1/chat/completions", "x".repeat(19_000));
    expect(response.status).toBe(400);
    expect(response.headers.get("x-should-retry")).toBe("false");
    const { error } = (await response.json()) as OpenAIError;
    expect(error).toMatchObject({
      type: "invalid_request_error",
      code: "INVESTIGATION_PROMPT_LIMIT",
      promptgate: { code: "INVESTIGATION_PROMPT_LIMIT", retryable: false, prompt_size: { limit_chars: 20_000 } },
    });
  });

  it("serves a call pinned to an earlier policy version kept in D1", async () => {
    const response = await chat(`/policies/${earlierRef}/openai/v1/chat/completions`, "x".repeat(19_000));
    expect(response.status).toBe(200);
    expect(promptSizeOf(response)).toMatchObject({ policy: earlierRef, limit_chars: 30_000 });
  });

  it("lists the bundled and the stored policy versions, marking the bundled one current", async () => {
    const body = (await (await send("/promptgate/policies")).json()) as { policies: Json[] };
    const bounded = body.policies.filter((policy) => policy.name === "investigation.bounded");
    expect(bounded.map((policy) => [policy.ref, policy.current])).toEqual(
      expect.arrayContaining([
        [currentRef, true],
        [earlierRef, false],
      ]),
    );
  });

  it("answers an unknown policy with 404 POLICY_NOT_FOUND in OpenAI's native shape", async () => {
    const response = await chat("/policies/no.such.policy/openai/v1/chat/completions", "hello");
    expect(response.status).toBe(404);
    const { error } = (await response.json()) as OpenAIError;
    expect(error).toMatchObject({ code: "POLICY_NOT_FOUND", promptgate: { code: "POLICY_NOT_FOUND" } });
  });
});

describe("structured answers on the worker", () => {
  const v22 = "investigation_bootstrap_v22";

  it("validates the simulated answer to a named schema with its precompiled validator", async () => {
    const response = await chat(
      "/openai/v1/chat/completions",
      "Bootstrap.",
      { "x-promptgate-schema": v22 },
      { response_format: { type: "json_schema", json_schema: { name: v22, schema: namedSchema(v22) } } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
    expect(((await response.json()) as { promptgate: Json }).promptgate).toEqual({
      validation: { valid: true, errors: [] },
    });
  });

  it("validates a client's own copy of a named schema, keys in another order", async () => {
    const reordered = Object.fromEntries(Object.entries(namedSchema(v22)).reverse());
    const response = await chat(
      "/openai/v1/chat/completions",
      "Bootstrap.",
      {},
      { response_format: { type: "json_schema", json_schema: { name: v22, schema: reordered } } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
  });

  it("validates a client's own schema, which no build step knew, by interpretation", async () => {
    const schema = { type: "object", required: ["answer"], properties: { answer: { type: "string" } } };
    const response = await chat(
      "/openai/v1/chat/completions",
      "Bootstrap.",
      {},
      { response_format: { type: "json_schema", json_schema: { name: "own", schema } } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-promptgate-validation")).toBe("valid");
  });

  it("refuses a client schema Node refuses too with 400 INVALID_REQUEST, sending nothing", async () => {
    const schema = { type: "object", properties: { answer: { $ref: "https://schemas.example.com/answer.json" } } };
    const response = await chat(
      "/openai/v1/chat/completions",
      "Bootstrap.",
      {},
      { response_format: { type: "json_schema", json_schema: { name: "own", schema } } },
    );
    expect(response.status).toBe(400);
    expect(response.headers.get("x-promptgate-simulated")).toBeNull();
    const { error } = (await response.json()) as OpenAIError;
    expect(error).toMatchObject({ code: "INVALID_REQUEST", param: "response_schema" });
    expect(String(error.message)).not.toContain("schemas.example.com");
  });

  for (const entry of edgeDiagnosticsCases) {
    it(`gives the shared fixture's diagnostics for ${entry.name} (Gemini, fake upstream)`, async () => {
      const response = await send(`/policies/investigation.bounded/gemini/v1beta/models/gemini-test:generateContent`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-promptgate-schema": entry.schema },
        body: JSON.stringify({
          contents: [{ role: "user", parts: [{ text: entry.name }] }],
          generationConfig: { responseMimeType: "application/json" },
        }),
      });
      if (entry.diagnostics.valid) {
        expect(response.status).toBe(200);
        return;
      }
      expect(response.status).toBe(422);
      const { error } = (await response.json()) as { error: Json & { promptgate: Json } };
      expect(error.promptgate).toMatchObject({ code: "RESPONSE_SCHEMA_INVALID", diagnostics: entry.diagnostics });
    });

    it(`gives the shared fixture's diagnostics for ${entry.name} from a client's own schema (interpreted)`, async () => {
      // The named schema with a vendor keyword: it validates alike, but no validator was precompiled for it.
      const schema = { ...namedSchema(entry.schema), "x-client-copy": true };
      const response = await send(`/policies/investigation.bounded/gemini/v1beta/models/gemini-test:generateContent`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          contents: [{ role: "user", parts: [{ text: entry.name }] }],
          generationConfig: { responseMimeType: "application/json", responseJsonSchema: schema },
        }),
      });
      if (entry.diagnostics.valid) {
        expect(response.status).toBe(200);
        return;
      }
      expect(response.status).toBe(422);
      const { error } = (await response.json()) as { error: Json & { promptgate: Json } };
      expect(error.promptgate).toMatchObject({ code: "RESPONSE_SCHEMA_INVALID", diagnostics: entry.diagnostics });
    });
  }
});

describe("case freezing and call records in D1", () => {
  it("freezes a case's first version of a name and refuses a pin to another with 409 POLICY_MISMATCH", async () => {
    const first = await chat("/policies/investigation.bounded/openai/v1/chat/completions", "one", {
      "x-promptgate-case": "edge-case-1",
    });
    expect(promptSizeOf(first).policy).toBe(currentRef);
    const pinned = await chat(`/policies/${earlierRef}/openai/v1/chat/completions`, "two", {
      "x-promptgate-case": "edge-case-1",
    });
    expect(pinned.status).toBe(409);
    expect(((await pinned.json()) as OpenAIError).error).toMatchObject({ code: "POLICY_MISMATCH" });
  });

  it("keeps a case frozen on an earlier version when it later uses the plain name", async () => {
    await chat(`/policies/${earlierRef}/openai/v1/chat/completions`, "one", { "x-promptgate-case": "edge-case-2" });
    const later = await chat("/policies/investigation.bounded/openai/v1/chat/completions", "x".repeat(19_000), {
      "x-promptgate-case": "edge-case-2",
    });
    expect(later.status).toBe(200);
    expect(promptSizeOf(later)).toMatchObject({ policy: earlierRef, limit_chars: 30_000 });
  });

  it("freezes one version when a case's first calls race, pinned to different versions", async () => {
    const responses = await Promise.all(
      [currentRef, earlierRef, currentRef, earlierRef, currentRef, earlierRef].map((ref) =>
        chat(`/policies/${ref}/openai/v1/chat/completions`, "race", { "x-promptgate-case": "edge-case-race" }),
      ),
    );
    const served = responses.filter((response) => response.status === 200).map((response) => promptSizeOf(response));
    const refused = responses.filter((response) => response.status === 409);
    expect(served.length).toBeGreaterThan(0);
    expect(new Set(served.map((size) => size.policy)).size).toBe(1);
    expect(served.length + refused.length).toBe(responses.length);
  });

  it("records each call in D1, readable through the admin routes", async () => {
    const response = await chat("/policies/investigation.bounded/openai/v1/chat/completions", "recorded", {
      "x-promptgate-case": "edge-case-record",
    });
    const ref = response.headers.get("x-promptgate-ref");
    let record: Response | undefined;
    // The record is written through waitUntil, after the response.
    for (let attempt = 0; attempt < 50 && record?.status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      record = await send(`/promptgate/admin/calls/${ref}`, { headers: { authorization: `Bearer ${adminKey}` } });
    }
    expect(record?.status).toBe(200);
    expect(await record?.json()).toMatchObject({
      ref,
      case: "edge-case-record",
      decision: "sent",
      provider: "simulated",
    });
  });
});

describe("stored history and sessions in D1", () => {
  function respond(input: string, previous?: string, key = "sk-edge-alice", model = "gpt-test"): Promise<Response> {
    const body: Json = { model, input };
    if (previous !== undefined) body.previous_response_id = previous;
    return send("/policies/investigation.bounded/openai/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
  }

  it("counts a stored response's history as the cached prefix of the next turn", async () => {
    const first = await respond("a".repeat(4000));
    expect(first.status).toBe(200);
    const { id } = (await first.json()) as { id: string };
    const second = await respond("b".repeat(10), id);
    expect(second.status).toBe(200);
    expect(promptSizeOf(second).cache_prefix_chars).toBeGreaterThan(4000);
  });

  it("answers an unknown previous_response_id with OpenAI's previous_response_not_found (SESSION_NOT_FOUND)", async () => {
    const response = await respond("hello", "resp_unknown0000");
    expect(response.status).toBe(400);
    const body = (await response.json()) as OpenAIError;
    expect(body.error).toMatchObject({
      message: "Previous response with id 'resp_unknown0000' not found.",
      code: "previous_response_not_found",
      param: "previous_response_id",
      promptgate: { code: "SESSION_NOT_FOUND" },
    });
  });

  it("answers another principal's response as unknown", async () => {
    const first = await respond("mine");
    const { id } = (await first.json()) as { id: string };
    const response = await respond("theirs", id, "sk-edge-mallory");
    expect(response.status).toBe(400);
    expect(((await response.json()) as OpenAIError).error.promptgate.code).toBe("SESSION_NOT_FOUND");
  });

  it("holds the history of a model routed to Gemini in D1 and sends it whole with the next turn", async () => {
    const first = await respond("Remember KESTREL.", undefined, "sk-edge-alice", "gemini-2.5-flash");
    expect(first.status).toBe(200);
    const made = (await first.json()) as { id: string; output: { content: { text: string }[] }[] };
    const answer = made.output[0]?.content[0]?.text ?? "";
    const second = await respond("Which word?", made.id, "sk-edge-alice", "gemini-2.5-flash");
    expect(second.status).toBe(200);
    const size = promptSizeOf(second);
    const said = ["Remember KESTREL.", answer, "Which word?"].reduce((sum, text) => sum + Array.from(text).length, 0);
    expect(size.message_chars).toBe(said);
    expect(size.cache_prefix_chars).toBe(0);
  });

  it("runs an answer job (background: true) to completed, polled from D1", async () => {
    const created = await send("/openai/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-edge-alice" },
      body: JSON.stringify({ model: "gpt-test", input: "a job at the edge", background: true }),
    });
    expect(created.status).toBe(200);
    const job = (await created.json()) as { id: string; status: string };
    expect(job.status).toBe("queued");
    let polled: { status: string; output_text?: string; output?: unknown[] } = job;
    for (let attempt = 0; attempt < 100 && !["completed", "failed"].includes(polled.status); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const response = await send(`/openai/v1/responses/${job.id}`, {
        headers: { authorization: "Bearer sk-edge-alice" },
      });
      polled = (await response.json()) as typeof polled;
    }
    expect(polled.status).toBe("completed");
    expect(polled.output?.length).toBeGreaterThan(0);
    const foreign = await send(`/openai/v1/responses/${job.id}`, {
      headers: { authorization: "Bearer sk-edge-mallory" },
    });
    expect(foreign.status).toBe(404);
  });

  it("refuses a continuation that changes the session's model", async () => {
    const first = await respond("hello");
    const { id } = (await first.json()) as { id: string };
    const response = await respond("next", id, "sk-edge-alice", "gpt-other");
    expect(response.status).toBe(400);
    expect(((await response.json()) as OpenAIError).error).toMatchObject({
      code: "SESSION_SETTINGS_CHANGED",
      param: "model",
    });
  });
});
