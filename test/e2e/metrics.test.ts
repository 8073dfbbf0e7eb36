import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PromptSize } from "../../src/errors/prompt-size.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { investigationAnswers } from "../support/investigation-answers.js";

// GET /metrics after a scripted mix of calls: every family's exact counts and bucket placements, computed in the test
// from the sizes each call reported (its x-promptgate-prompt-size header), not from the gateway's metrics code.

const adminKey = "admin-metrics";
const v22 = JSON.parse(readFileSync("schemas/investigation_bootstrap_v22.json", "utf8"));
const { validAnswer, answerWithStringFinding } = investigationAnswers("METRICS-SECRET");

let harness: GatewayUnderTest;

beforeAll(async () => {
  harness = await startGatewayUnderTest({ PROMPTGATE_ADMIN_KEY: adminKey });
});
afterAll(() => harness.close());

/** The provider answers with this content. */
function upstreamAnswers(content: string): void {
  harness.upstream.answerWith((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        id: "chatcmpl-m",
        object: "chat.completion",
        created: 1,
        model: "gpt-test",
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      }),
    );
  });
}

async function chat(content: string, schema?: unknown): Promise<{ status: number; size: PromptSize | undefined }> {
  const response = await fetch(`${harness.gateway.url}/policies/investigation.bounded/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
    body: JSON.stringify({
      model: "gpt-test",
      messages: [{ role: "user", content }],
      ...(schema === undefined
        ? {}
        : { response_format: { type: "json_schema", json_schema: { name: "investigation_bootstrap_v22", schema } } }),
    }),
  });
  await response.arrayBuffer();
  const header = response.headers.get("x-promptgate-prompt-size");
  return { status: response.status, size: header === null ? undefined : (JSON.parse(header) as PromptSize) };
}

async function metricsText(headers: Record<string, string> = { authorization: `Bearer ${adminKey}` }) {
  const response = await fetch(`${harness.gateway.url}/metrics`, { headers });
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

/** The value of one sample, by its name and exact labels (in any order). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(found).length && wanted.every(([key, value]) => found[key] === value)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

describe("GET /metrics", () => {
  const sizes: PromptSize[] = [];

  beforeAll(async () => {
    upstreamAnswers("plain answer");
    const accepted = await chat("A short question.");
    const overTarget = await chat("x".repeat(12_000));
    const refused = await chat("y".repeat(19_500));
    expect([accepted.status, overTarget.status, refused.status]).toEqual([200, 200, 400]);
    upstreamAnswers(JSON.stringify(validAnswer()));
    const valid = await chat("Bootstrap.", v22);
    upstreamAnswers(JSON.stringify(answerWithStringFinding()));
    const invalid = await chat("Bootstrap again.", v22);
    expect([valid.status, invalid.status]).toEqual([200, 422]);
    for (const call of [accepted, overTarget, refused, valid, invalid]) if (call.size) sizes.push(call.size);
  });

  it("needs the admin key unless the metrics are public", async () => {
    expect((await metricsText({})).status).toBe(401);
    const answer = await metricsText();
    expect(answer.status).toBe(200);
    expect(answer.type).toContain("text/plain");
  });

  it("counts calls by surface, provider, policy, decision and code, and rejections by check", async () => {
    const { text } = await metricsText();
    const labels = {
      surface: "openai",
      provider: harness.upstream.origin,
      policy: "investigation.bounded",
      team: "none",
    };
    expect(sample(text, "promptgate_calls_total", { ...labels, decision: "sent", code: "none" })).toBe(3);
    expect(
      sample(text, "promptgate_calls_total", { ...labels, decision: "rejected", code: "INVESTIGATION_PROMPT_LIMIT" }),
    ).toBe(1);
    expect(
      sample(text, "promptgate_calls_total", { ...labels, decision: "sent", code: "RESPONSE_SCHEMA_INVALID" }),
    ).toBe(1);
    expect(
      sample(text, "promptgate_rejections_total", {
        policy: "investigation.bounded",
        check: "preflight",
        code: "INVESTIGATION_PROMPT_LIMIT",
        team: "none",
      }),
    ).toBe(1);
  });

  it("places each check's window fill and total in the buckets its sizes fall in", async () => {
    const { text } = await metricsText();
    const policy = "investigation.bounded";
    // Every call reported its preflight; the refused one was never checked by the provider check.
    const preflights = sizes.filter((size) => size.check === "preflight");
    expect(preflights).toHaveLength(5);
    for (const le of [0.25, 0.5, 0.8, 0.9, 1, 1.25, 2]) {
      const expected = preflights.filter((size) => size.conservative_total_chars / size.limit_chars <= le).length;
      const bucket = sample(text, "promptgate_window_fill_ratio_bucket", {
        le: String(le),
        policy,
        check: "preflight",
      });
      expect(bucket, `le=${le}`).toBe(expected);
    }
    expect(sample(text, "promptgate_window_fill_ratio_count", { policy, check: "provider" })).toBe(4);
    for (const le of [1000, 10_000, 20_000]) {
      const expected = preflights.filter((size) => size.total_chars <= le).length;
      expect(sample(text, "promptgate_prompt_total_chars_bucket", { le: String(le), policy, check: "preflight" })).toBe(
        expected,
      );
    }
    expect(sample(text, "promptgate_schema_chars_count", { policy })).toBe(2);
    const schemaChars = preflights.reduce((sum, size) => sum + size.schema_chars, 0);
    expect(schemaChars).toBeGreaterThan(2 * JSON.stringify(v22).length - 1);
    expect(sample(text, "promptgate_schema_chars_sum", { policy })).toBe(schemaChars);
  });

  it("counts validation outcomes, and times calls and provider operations", async () => {
    const { text } = await metricsText();
    const policy = "investigation.bounded";
    // The schema was sent natively; no header named it and the policy lists none: the client's own.
    expect(sample(text, "promptgate_validations_total", { policy, schema: "client", outcome: "valid" })).toBe(1);
    expect(sample(text, "promptgate_validations_total", { policy, schema: "client", outcome: "invalid" })).toBe(1);
    expect(sample(text, "promptgate_call_duration_seconds_count", { surface: "openai", decision: "sent" })).toBe(4);
    // A model the table does not name is `other`: a client cannot mint label values.
    const operation = {
      gen_ai_operation_name: "chat",
      gen_ai_request_model: "other",
      promptgate_provider: harness.upstream.origin,
    };
    expect(sample(text, "gen_ai_client_operation_duration_seconds_count", operation)).toBe(4);
    for (const [type, perCall] of [
      ["input", 12],
      ["output", 5],
    ] as const) {
      const tokens = { ...operation, gen_ai_token_type: type };
      expect(sample(text, "gen_ai_client_token_usage_count", tokens)).toBe(4);
      expect(sample(text, "gen_ai_client_token_usage_sum", tokens)).toBe(4 * perCall);
    }
    const upstream = { provider: harness.upstream.origin, model: "other" };
    expect(sample(text, "promptgate_upstream_first_byte_seconds_count", upstream)).toBe(4);
    expect(sample(text, "promptgate_added_seconds_count", { surface: "openai" })).toBe(4);
    expect(text).toContain("process_cpu_seconds_total");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
    expect(text).not.toContain("METRICS-SECRET");
  });
});

describe("the provider's time on the record", () => {
  it("keeps the milliseconds until the answer's head and its end, the gateway's own time being the rest", async () => {
    upstreamAnswers("timed");
    const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "time me" }] }),
    });
    await response.arrayBuffer();
    const ref = response.headers.get("x-promptgate-ref");
    const record = await (
      await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
        headers: { authorization: `Bearer ${adminKey}` },
      })
    ).json();
    const timing = record.upstream_timing as { first_byte_ms: number; total_ms: number };
    expect(timing.first_byte_ms).toBeGreaterThan(0);
    expect(timing.total_ms).toBeGreaterThanOrEqual(timing.first_byte_ms);
    expect(record.usage).toEqual({ input_tokens: 12, output_tokens: 5 });
  });
});

describe("a named schema", () => {
  it("labels its validations with its name, and the record keeps the name", async () => {
    upstreamAnswers(JSON.stringify(validAnswer()));
    const response = await fetch(`${harness.gateway.url}/policies/investigation.bounded/openai/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer sk-client",
        "x-promptgate-schema": "investigation_bootstrap_v22",
      },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "Bootstrap by name." }] }),
    });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    const record = await (
      await fetch(`${harness.gateway.url}/promptgate/admin/calls/${response.headers.get("x-promptgate-ref")}`, {
        headers: { authorization: `Bearer ${adminKey}` },
      })
    ).json();
    expect(record.schema).toBe("investigation_bootstrap_v22");
    const { text } = await metricsText();
    const labels = { policy: "investigation.bounded", schema: "investigation_bootstrap_v22", outcome: "valid" };
    expect(sample(text, "promptgate_validations_total", labels)).toBe(1);
  });
});

describe("PROMPTGATE_METRICS_PUBLIC and PROMPTGATE_METRICS_PORT", () => {
  it("serves public metrics on a port of their own, and not beside the calls", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
      });
    });
    const gateway = await startGatewayUnderTest({
      PROMPTGATE_METRICS_PUBLIC: "true",
      PROMPTGATE_METRICS_PORT: String(port),
    });
    try {
      const own = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(own.status).toBe(200);
      expect(await own.text()).toContain("promptgate_calls_total");
      expect((await fetch(`${gateway.gateway.url}/metrics`)).status).toBe(404);
    } finally {
      await gateway.close();
    }
  });
});
