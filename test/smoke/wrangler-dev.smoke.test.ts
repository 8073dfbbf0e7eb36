import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { namedSchemas } from "../../src/runtime/workers/generated/assets.js";
import { edgeDiagnosticsCases, geminiAnswerFor } from "../support/edge-diagnostics.js";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev.js";

// The worker under `wrangler dev`: workerd as deployed, where Ajv cannot compile during a request. The real SDK
// clients drive it over loopback; its OpenAI and Gemini upstreams are one recording fake server.

let upstream: FakeUpstream;
let dev: WranglerDev;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  dev = await startWranglerDev({
    PROMPTGATE_UPSTREAM_OPENAI: `${upstream.origin}/openai/v1`,
    PROMPTGATE_UPSTREAM_GEMINI: `${upstream.origin}/gemini`,
  });
});
afterAll(async () => {
  await dev?.stop();
  await upstream?.close();
});
beforeEach(() => {
  upstream.received.length = 0;
  upstream.answerWith(undefined);
});

function openai(prefix = ""): OpenAI {
  return new OpenAI({ apiKey: "sk-client", baseURL: `${dev.url}${prefix}/openai/v1`, maxRetries: 0 });
}

function namedSchemaOf(name: string): Record<string, unknown> {
  const found = namedSchemas.find(([schemaName]) => schemaName === name);
  if (found === undefined) throw new Error(`${name} is not bundled.`);
  return structuredClone(found[1]) as Record<string, unknown>;
}

function gemini(prefix = "", headers: Record<string, string> = {}): GoogleGenAI {
  return new GoogleGenAI({ apiKey: "client-key", httpOptions: { baseUrl: `${dev.url}${prefix}/gemini`, headers } });
}

describe("the worker under wrangler dev, driven by the OpenAI SDK", () => {
  it("relays a chat call to the upstream with the client's key and reports its prompt size", async () => {
    const { data, response } = await openai()
      .chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hello edge" }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain("hello edge");
    expect(JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "null")).toMatchObject({
      check: "preflight",
      message_chars: 10,
    });
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]).toMatchObject({ url: "/openai/v1/chat/completions" });
    expect(upstream.received[0]?.headers.authorization).toBe("Bearer sk-client");
  });

  it("passes a stream through chunk by chunk", async () => {
    const stream = await openai().chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "stream me" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toContain("stream me");
  });

  it("rejects an oversize call as a native BadRequestError, sending nothing upstream", async () => {
    const failure = await openai("/policies/investigation.bounded")
      .chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "x".repeat(19_000) }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(upstream.received).toHaveLength(0);
  });
});

describe("the worker under wrangler dev, driven by the Gemini SDK", () => {
  const stringFinding = edgeDiagnosticsCases.find((entry) => entry.name === "a finding given as a string")!;

  it("gives the shared fixture's diagnostics from a precompiled named schema, in Gemini's error shape", async () => {
    upstream.answerWith((request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(geminiAnswerFor(request.body)));
    });
    const failure = await gemini("/policies/investigation.bounded", { "x-promptgate-schema": stringFinding.schema })
      .models.generateContent({ model: "gemini-test", contents: stringFinding.name })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(422);
    const body = JSON.parse((failure as ApiError).message) as { error: { promptgate: Record<string, unknown> } };
    expect(body.error.promptgate).toMatchObject({
      code: "RESPONSE_SCHEMA_INVALID",
      diagnostics: stringFinding.diagnostics,
    });
  });

  it("validates a client's own schema, which no build step knew, with the shared fixture's diagnostics", async () => {
    // Workers forbid code generation during a request: this schema is interpreted, not compiled.
    upstream.answerWith((request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(geminiAnswerFor(request.body)));
    });
    const named = namedSchemaOf(stringFinding.schema);
    const failure = await gemini("/policies/investigation.bounded")
      .models.generateContent({
        model: "gemini-test",
        contents: stringFinding.name,
        config: { responseMimeType: "application/json", responseJsonSchema: { ...named, "x-client-copy": true } },
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(422);
    const body = JSON.parse((failure as ApiError).message) as { error: { promptgate: Record<string, unknown> } };
    expect(body.error.promptgate).toMatchObject({
      code: "RESPONSE_SCHEMA_INVALID",
      diagnostics: stringFinding.diagnostics,
    });
    expect(upstream.received).toHaveLength(1);
  });

  it("refuses a client schema with an external reference with a native 400, sending nothing", async () => {
    const failure = await gemini("/policies/investigation.bounded")
      .models.generateContent({
        model: "gemini-test",
        contents: "Answer.",
        config: {
          responseMimeType: "application/json",
          responseJsonSchema: {
            type: "object",
            properties: { answer: { $ref: "https://schemas.example.com/a.json" } },
          },
        },
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(400);
    expect((failure as ApiError).message).not.toContain("schemas.example.com");
    expect(upstream.received).toHaveLength(0);
  });
});
