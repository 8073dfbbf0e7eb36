import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// Each call as an OpenTelemetry span, exported over OTLP/HTTP to an in-process receiver: the GenAI attributes,
// promptgate's own, the incoming traceparent continued and passed on to the provider, and never any prompt text.

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number };
  attributes: { key: string; value: Record<string, unknown> }[];
}

const secret = "TRACE-SECRET-PROMPT";
const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const parentId = "00f067aa0ba902b7";

let receiver: Server;
const exported: string[] = [];
let harness: GatewayUnderTest;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    request.on("end", () => {
      if (request.url === "/v1/traces") exported.push(body);
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const { port } = receiver.address() as AddressInfo;
  harness = await startGatewayUnderTest({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_SERVICE_NAME: "promptgate-test",
  });
});
afterAll(async () => {
  await harness.close();
  await new Promise((resolve) => receiver.close(resolve));
});

function spans(): OtlpSpan[] {
  return exported.flatMap((body) => {
    const data = JSON.parse(body) as {
      resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
    };
    return data.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
  });
}

function attributesOf(span: OtlpSpan): Record<string, unknown> {
  return Object.fromEntries(
    span.attributes.map(({ key, value }) => {
      const [kind, raw] = Object.entries(value)[0] ?? [];
      return [key, kind === "intValue" ? Number(raw) : raw];
    }),
  );
}

async function spanOfRef(ref: string | null): Promise<OtlpSpan> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const found = spans().find((span) => attributesOf(span)["promptgate.ref"] === ref);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`No span for ${ref}`);
}

async function chat(content: string, headers: Record<string, string> = {}): Promise<Response> {
  const response = await fetch(`${harness.gateway.url}/policies/investigation.bounded/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-client", ...headers },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }] }),
  });
  await response.arrayBuffer();
  return response;
}

describe("OpenTelemetry spans", () => {
  it("continue the caller's trace, pass it on to the provider, and describe the call without its text", async () => {
    const response = await chat(`Is the job stalled? ${secret}`, {
      traceparent: `00-${traceId}-${parentId}-01`,
      "x-promptgate-case": "case-traced",
    });
    expect(response.status).toBe(200);
    const span = await spanOfRef(response.headers.get("x-promptgate-ref"));
    expect(span.traceId).toBe(traceId);
    expect(span.parentSpanId).toBe(parentId);
    expect(span.name).toBe("chat gpt-test");
    const sent = harness.upstream.received.at(-1)?.headers.traceparent;
    expect(sent).toBe(`00-${traceId}-${span.spanId}-01`);
    const attributes = attributesOf(span);
    expect(attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-test",
      "gen_ai.response.model": "gpt-test",
      "promptgate.decision": "sent",
      "promptgate.policy": expect.stringMatching(/^investigation\.bounded@[0-9a-f]{12}$/),
      "promptgate.case": "case-traced",
      "promptgate.limit_chars": 20_000,
    });
    expect(attributes["promptgate.preflight.total_chars"]).toBeGreaterThan(0);
    expect(attributes["promptgate.provider_check.total_chars"]).toBeGreaterThan(0);
    expect(attributes["gen_ai.usage.input_tokens"]).toBeTypeOf("number");
    expect(attributes["gen_ai.response.id"]).toMatch(/^chatcmpl-/);
    expect(attributes["gen_ai.response.finish_reasons"]).toEqual({ values: [{ stringValue: "stop" }] });
    expect(exported.join("")).not.toContain(secret);
    expect(exported.join("")).toContain("promptgate-test");
  });

  it("starts a trace of its own without a traceparent, and marks a refused call as an error", async () => {
    const response = await chat("z".repeat(19_500));
    expect(response.status).toBe(400);
    const span = await spanOfRef(response.headers.get("x-promptgate-ref"));
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.traceId).not.toBe(traceId);
    expect(span.status?.code).toBe(2);
    expect(attributesOf(span)).toMatchObject({
      "error.type": "INVESTIGATION_PROMPT_LIMIT",
      "promptgate.decision": "rejected",
    });
  });
});

describe("the span of a call with a named key", () => {
  it("names the key by id, name and team, and holds no part of its secret", async () => {
    const { port } = receiver.address() as AddressInfo;
    const keyed = await startGatewayUnderTest({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: "50",
      PROMPTGATE_KEY_MODE: "keys",
      PROMPTGATE_ADMIN_KEY: "traces-admin-key",
      OPENAI_API_KEY: "sk-traces-server-key",
    });
    try {
      const made = await fetch(`${keyed.gateway.url}/promptgate/admin/keys`, {
        method: "POST",
        headers: { authorization: "Bearer traces-admin-key", "content-type": "application/json" },
        body: JSON.stringify({ name: "traced-key", team: "team-traced" }),
      });
      const { id, key } = (await made.json()) as { id: string; key: string };
      const response = await fetch(`${keyed.gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hello" }] }),
      });
      expect(response.status).toBe(200);
      const span = await spanOfRef(response.headers.get("x-promptgate-ref"));
      expect(attributesOf(span)).toMatchObject({
        "promptgate.key.id": id,
        "promptgate.key.name": "traced-key",
        "promptgate.key.team": "team-traced",
      });
      for (const body of exported) expect(body).not.toContain(key.slice("pg_".length));
    } finally {
      await keyed.close();
    }
  });
});
