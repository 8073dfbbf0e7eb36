import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { JsonScanner } from "../../src/json/json-scanner.js";
import { createKeyRing } from "../../src/pipeline/key-ring.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { policies as bundledPolicies } from "../../src/runtime/workers/generated/assets.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { surfaces } from "../../src/surfaces/surfaces.js";
import type { Transport } from "../../src/transport/transport.js";
import { appUnderTest } from "../support/app-under-test.js";
import { testSchemaValidators } from "../support/schema-validators.js";

// The stage timeouts of contract section 11 in the app without a socket, on Node and in workerd (test/http runs in
// both), each at 0.2 s; test/e2e/upstream-timeouts.test.ts shows them through the openai SDK against a real socket.

const timeouts = {
  OPENAI_API_KEY: "k",
  PROMPTGATE_UPSTREAM_CONNECT_SECONDS: "0.2",
  PROMPTGATE_UPSTREAM_FIRST_BYTE_SECONDS: "0.2",
  PROMPTGATE_UPSTREAM_IDLE_SECONDS: "0.2",
};
const chat = { model: "gpt-test", messages: [{ role: "user", content: "hi" }] };
const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const event = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** An upstream that takes the request and never answers, until the gateway aborts it. */
const silent = (request: Request) =>
  new Promise<Response>((_, reject) => {
    request.signal.addEventListener("abort", () => reject(request.signal.reason));
  });

describe("a provider that accepts a streamed call and never answers", () => {
  it("gives the client the native 504 timeout at the first-byte timeout, recorded as first_byte", async () => {
    const { app, records } = await appUnderTest(timeouts, undefined, silent);
    const response = await app.request("/openai/v1/chat/completions", post({ ...chat, stream: true }));
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ error: { code: "timeout", promptgate: { retryable: true } } });
    expect(records.at(-1)).toMatchObject({
      error: "timeout",
      upstream_timeout: "first_byte",
      upstream_error: { reason: "first_byte_timeout" },
    });
  });

  it("leaves a non-streamed call to its deadline: an answer that takes longer than the first-byte timeout arrives", async () => {
    const { app, records } = await appUnderTest(timeouts, undefined, async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return Response.json({
        id: "chatcmpl-late",
        object: "chat.completion",
        created: 0,
        model: "gpt-test",
        choices: [{ index: 0, message: { role: "assistant", content: "late" }, finish_reason: "stop" }],
      });
    });
    const response = await app.request("/openai/v1/chat/completions", post(chat));
    expect(response.status).toBe(200);
    expect(records.at(-1)?.upstream_timeout).toBeUndefined();
  });
});

describe("a provider's stream that stops between events", () => {
  it("ends with the native error event at the idle timeout, after what came before, recorded as idle", async () => {
    const { app, records } = await appUnderTest(timeouts, undefined, async () => {
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode(event("first"))),
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const response = await app.request("/openai/v1/chat/completions", post({ ...chat, stream: true }));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"first"');
    expect(text.slice(text.lastIndexOf("data:"))).toMatch(/"code":"timeout"/);
    expect(records.at(-1)).toMatchObject({
      error: "timeout",
      upstream_timeout: "idle",
      upstream_error: { reason: "idle_timeout" },
    });
  });
});

describe("a transport that never gets a connection open", () => {
  it("gives the client the native 504 timeout at the connect timeout, recorded as connect", async () => {
    // fetch cannot tell when its connection opens (it reports it as it starts), so the transport is one of the test's:
    // it never reports the connection and fails only when the gateway aborts it, as undici's does.
    const connecting: Transport = (request) =>
      new Promise((_, reject) => request.signal?.addEventListener("abort", () => reject(request.signal?.reason)));
    const records: CallRecord[] = [];
    const store = memoryStore();
    const deps: Deps = {
      config: readConfig({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG: "silent", ...timeouts }),
      policies: await identifyPolicies(bundledPolicies),
      models: modelTableOf(undefined, surfaces),
      surfaces,
      transport: connecting,
      jsonScanner: new JsonScanner(),
      schemas: new Map(),
      schemaValidators: testSchemaValidators,
      store,
      keyRing: createKeyRing({ store, unnamedKeys: [], fileKeys: [] }),
      secretNamed: () => undefined,
      recordCall: async (record) => void records.push(record),
      newRef,
      now: () => new Date(),
    };
    const response = await createApp(deps).request("/openai/v1/chat/completions", post(chat));
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ error: { code: "timeout" } });
    expect(records.at(-1)).toMatchObject({
      upstream_timeout: "connect",
      upstream_error: { reason: "connect_timeout" },
    });
  });
});
