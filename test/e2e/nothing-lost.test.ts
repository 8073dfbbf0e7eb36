import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app.js";
import type { Deps } from "../../src/deps.js";
import type { AbortNotice } from "../../src/http/abort-notice.js";
import { createNodeDeps } from "../../src/runtime/node/node-gateway.js";
import { validateAnswer } from "../../src/schema/diagnostics.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { type FakeUpstream, type ReceivedRequest, startFakeUpstream } from "../support/fake-upstream.js";
import { upstreamEnvironment } from "../support/gateway-process.js";
import { copyPolicies, editPolicy, tempDatabase, withLimit } from "../support/temp-state.js";

// Every path of a call ends on the record, and what the gateway fails at itself reaches the log: the
// gateway runs in this process (its app's fetch handed to the SDK clients, as Hono's tests call
// `app.request()`), in front of a recording fake upstream, so that a test can break its store.

/** Every deadline the pipeline starts, and whether it was cleared. */
const deadlines = vi.hoisted(() => [] as Array<{ cleared: boolean }>);

vi.mock(import("../../src/schema/diagnostics.js"), async (importOriginal) => {
  const original = await importOriginal();
  return { ...original, validateAnswer: vi.fn(original.validateAnswer) };
});

vi.mock(import("../../src/pipeline/deadline.js"), async (importOriginal) => {
  const original = await importOriginal();
  return {
    ...original,
    startDeadline: (seconds: number, client?: AbortNotice) => {
      const deadline = original.startDeadline(seconds, client);
      const tracked = { cleared: false };
      deadlines.push(tracked);
      return {
        ...deadline,
        clear: () => {
          tracked.cleared = true;
          deadline.clear();
        },
      };
    },
  };
});

const clientKey = "sk-client-nothing-lost-4711";
const gatewayKey = "gw-key-nothing-lost-0815";
const adminKey = "nothing-lost-admin-key";

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());
afterEach(() => upstream.answerWith(undefined));

type Json = Record<string, unknown>;

/** A gateway in this process: its deps (a test may break them before the app is made), its log lines, and a fetch. */
interface InProcessGateway {
  deps: Deps;
  logs: Json[];
  /** The app's own fetch, for the SDK clients; every answer it gave is in `answers`. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  answers: Response[];
  lastRef(): string;
  close(): Promise<void>;
}

async function inProcessGateway(
  environment: Record<string, string> = {},
  adjust: (deps: Deps) => void = () => undefined,
): Promise<InProcessGateway> {
  const logs: Json[] = [];
  const deps = await createNodeDeps(
    { PROMPTGATE_DB: "memory", PROMPTGATE_ADMIN_KEY: adminKey, ...upstreamEnvironment(upstream), ...environment },
    { logDestination: { write: (line: string) => void logs.push(JSON.parse(line) as Json) } },
  );
  adjust(deps);
  const app = createApp(deps);
  const answers: Response[] = [];
  return {
    deps,
    logs,
    answers,
    fetch: async (input, init) => {
      const response = await app.fetch(new Request(input, init));
      answers.push(response);
      return response;
    },
    lastRef: () => answers.at(-1)?.headers.get("x-promptgate-ref") ?? "",
    close: () => deps.store.close(),
  };
}

function openai(gateway: InProcessGateway, options: { apiKey?: string; headers?: Record<string, string> } = {}) {
  return new OpenAI({
    apiKey: options.apiKey ?? clientKey,
    baseURL: "http://gateway.test/openai/v1",
    maxRetries: 0,
    fetch: gateway.fetch,
    ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
  });
}

function anthropic(gateway: InProcessGateway) {
  return new Anthropic({
    apiKey: clientKey,
    baseURL: "http://gateway.test/anthropic",
    maxRetries: 0,
    fetch: gateway.fetch,
  });
}

function gemini(gateway: InProcessGateway) {
  return new GoogleGenAI({
    apiKey: clientKey,
    httpOptions: { baseUrl: "http://gateway.test/gemini", fetch: gateway.fetch },
  });
}

const chat = { model: "gpt-test", messages: [{ role: "user" as const, content: "hello" }] };

function internalErrorLines(gateway: InProcessGateway, ref: string): Json[] {
  return gateway.logs.filter((line) => line.event === "internal_error" && line.ref === ref);
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

describe("an internal error", () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await inProcessGateway({}, (deps) => {
      // The store fails with a message that names the client's key, as a driver's message might.
      deps.store.freezeCasePolicy = async () => {
        throw new TypeError(`freeze failed for Bearer ${clientKey} at "case text the client sent"`);
      };
      deps.store.getCall = async () => {
        throw new RangeError(`lookup failed with key ${clientKey}`);
      };
    });
  });
  afterAll(() => gateway.close());

  it("gives the openai SDK a 500 internal and logs its class and stack once, at error level, under the call's ref", async () => {
    const error = await rejectionOf(
      openai(gateway, { headers: { "x-promptgate-case": "broken-store" } }).chat.completions.create(chat),
    );
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("internal");
    const ref = gateway.lastRef();
    const lines = internalErrorLines(gateway, ref);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", class: "TypeError", during: "call" });
    expect(String(lines[0]?.stack)).toMatch(/^TypeError: freeze failed for Bearer \[redacted\]/);
    expect(String(lines[0]?.stack)).toMatch(/\n\s+at /);
    expect(String(lines[0]?.stack)).not.toContain("case text the client sent");
    // The call's own line is written once its answer is on its way: after this turn of the event loop.
    await new Promise(setImmediate);
    expect(JSON.stringify(gateway.logs)).not.toContain(clientKey);
    // The call's own line still says what the client got.
    expect(gateway.logs.find((line) => line.msg === "call" && line.ref === ref)).toMatchObject({
      level: "error",
      error: "internal",
    });
    // The record is kept (its write is not the one that failed), with the error's class.
    expect(await gateway.deps.store.listCallsOfCase("broken-store", 10)).toMatchObject([
      { ref, error: "internal", internal_error: { during: "call", class: "TypeError" } },
    ]);
  });

  it("is logged by the app's own error handler too, outside any call (an admin route)", async () => {
    const response = await gateway.fetch("http://gateway.test/promptgate/admin/calls/ref_0000000000000000", {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(response.status).toBe(500);
    const ref = response.headers.get("x-promptgate-ref") ?? "";
    const lines = internalErrorLines(gateway, ref);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", class: "RangeError", during: "app" });
    expect(String(lines[0]?.stack)).toContain("lookup failed with key [redacted]");
    expect(String(lines[0]?.stack)).not.toContain(adminKey);
  });
});

describe("a throw at the end of a stream", () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await inProcessGateway();
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    deadlines.length = 0;
  });

  it("ends the openai SDK's stream as the provider sent it, writes one record with the failure, and clears the deadline", async () => {
    vi.mocked(validateAnswer).mockImplementationOnce(() => {
      throw new TypeError("the validator failed");
    });
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const stream = await openai(gateway).chat.completions.create({
      ...chat,
      stream: true,
      response_format: { type: "json_schema", json_schema: { name: "answer", schema } },
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(JSON.parse(text)).toHaveProperty("answer");
    const ref = gateway.lastRef();
    const record = await gateway.deps.store.getCall(ref);
    expect(record).toMatchObject({
      decision: "sent",
      validation: null,
      internal_error: { during: "stream", class: "TypeError" },
    });
    expect(record?.error).toBeUndefined();
    expect(internalErrorLines(gateway, ref)).toHaveLength(1);
    // The call's own line is written once its answer is on its way: after this turn of the event loop.
    await new Promise(setImmediate);
    expect(gateway.logs.filter((line) => line.msg === "call" && line.ref === ref)).toHaveLength(1);
    expect(deadlines).toHaveLength(1);
    expect(deadlines[0]?.cleared).toBe(true);
  });

  it("still clears the deadline and writes the record of a stream the client leaves", async () => {
    const delta = 'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n';
    upstream.answerWith(pacedEvents([delta, delta], 2_000));
    const response = await gateway.fetch("http://gateway.test/openai/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${clientKey}` },
      body: JSON.stringify({ ...chat, stream: true }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    // What a server does with the response when its client disconnects.
    await reader.cancel();
    expect(await gateway.deps.store.getCall(gateway.lastRef())).toMatchObject({ decision: "cancelled" });
    expect(deadlines[0]?.cleared).toBe(true);
  });
});

/**
 * An upstream answer that sends `events` one by one, `gapMs` apart, as a model streams tokens, and
 * ends the response together with the last one (as providers do).
 */
function pacedEvents(
  events: readonly string[],
  gapMs = 5,
): (request: ReceivedRequest, response: ServerResponse) => void {
  return (_request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    let index = 0;
    const next = () => {
      const event = events[index++];
      if (event === undefined) return;
      if (index === events.length) {
        response.end(event);
        return;
      }
      response.write(event);
      setTimeout(next, gapMs);
    };
    next();
  };
}

/** The simulated provider's events for a request, sent paced. */
function pacedSimulation(): (request: ReceivedRequest, response: ServerResponse) => void {
  const simulated = createSimulatedProvider();
  return (request, response) => {
    void (async () => {
      const answer = await simulated.fetch(
        new Request(`http://fake.upstream${request.url}`, {
          method: request.method,
          headers: { "content-type": "application/json" },
          body: request.body,
        }),
      );
      const text = await answer.text();
      const events = text.split(/(?<=\r?\n\r?\n)/).filter((event) => event.trim() !== "");
      pacedEvents(events)(request, response);
    })();
  };
}

describe("a stream's record", () => {
  let gateway: InProcessGateway;
  let database: string;
  beforeAll(async () => {
    database = tempDatabase();
    gateway = await inProcessGateway({ PROMPTGATE_DB: database });
  });
  afterAll(() => gateway.close());
  beforeEach(() => upstream.answerWith(pacedSimulation()));

  /** Whether the record of `ref` is committed, read from another connection at once (synchronously). */
  function committed(ref: string): boolean {
    const reader = new Database(database, { readonly: true });
    try {
      return reader.prepare("SELECT 1 FROM calls WHERE ref = ?").get(ref) !== undefined;
    } finally {
      reader.close();
    }
  }

  it("is committed when the Anthropic SDK hands over message_stop, the stream's final event", async () => {
    const stream = await anthropic(gateway).messages.create({
      model: "claude-test",
      max_tokens: 64,
      messages: [{ role: "user", content: "hello there" }],
      stream: true,
    });
    const seen: Array<[string, boolean]> = [];
    for await (const event of stream) seen.push([event.type, committed(gateway.lastRef())]);
    expect(seen.at(-1)).toEqual(["message_stop", true]);
    // The events before it were not held back for the record.
    expect(seen[0]).toEqual(["message_start", false]);
  });

  it("is committed when the Gemini SDK hands over the stream's last chunk", async () => {
    const chunks: boolean[] = [];
    const stream = await gemini(gateway).models.generateContentStream({
      model: "gemini-test",
      contents: "hello there",
    });
    for await (const _chunk of stream) chunks.push(committed(gateway.lastRef()));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.at(-1)).toBe(true);
  });

  it("is committed when the client has read the openai stream's last byte ([DONE])", async () => {
    const response = await gateway.fetch("http://gateway.test/openai/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${clientKey}` },
      body: JSON.stringify({
        ...chat,
        messages: [{ role: "user", content: "a longer prompt to stream" }],
        stream: true,
      }),
    });
    const ref = response.headers.get("x-promptgate-ref") ?? "";
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += decoder.decode(chunk.value, { stream: true });
      if (text.includes("[DONE]")) expect(committed(ref)).toBe(true);
    }
    expect(text).toContain("[DONE]");
  });

  it("is committed when the openai SDK's stream ends", async () => {
    const stream = await openai(gateway).chat.completions.create({ ...chat, stream: true });
    for await (const _chunk of stream) {
      // Read to the end.
    }
    expect(committed(gateway.lastRef())).toBe(true);
  });
});

describe("requests refused before authentication", () => {
  let gateway: InProcessGateway;
  let database: string;
  const long = "x".repeat(7_000);
  beforeAll(async () => {
    database = tempDatabase();
    gateway = await inProcessGateway({
      PROMPTGATE_DB: database,
      PROMPTGATE_KEYS: gatewayKey,
      OPENAI_API_KEY: "sk-server-0000",
    });
  });
  afterAll(() => gateway.close());

  function callRows(): number {
    const reader = new Database(database, { readonly: true });
    try {
      return (reader.prepare("SELECT count(*) AS count FROM calls").get() as { count: number }).count;
    } finally {
      reader.close();
    }
  }

  it("write no call record and no line per request, only a count at most once a minute", async () => {
    const rowsBefore = callRows();
    const linesBefore = gateway.logs.length;
    const sentBefore = upstream.received.length;
    const client = openai(gateway, {
      apiKey: "gw-key-wrong",
      headers: { "x-promptgate-case": long, "x-promptgate-call": long },
    });
    for (let request = 0; request < 200; request++) {
      const error = await rejectionOf(client.chat.completions.create(chat));
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    }
    expect(callRows()).toBe(rowsBefore);
    const lines = gateway.logs.slice(linesBefore);
    expect(lines.length).toBeLessThanOrEqual(1);
    for (const line of lines) {
      expect(line).toMatchObject({ event: "refused_unauthenticated", level: "warn" });
      expect(JSON.stringify(line)).not.toContain(long);
    }
    expect(upstream.received).toHaveLength(sentBefore);
  });

  it("refuse an over-long case header of a known client with its native 400 INVALID_REQUEST, recorded without it", async () => {
    const error = await rejectionOf(
      openai(gateway, { apiKey: gatewayKey, headers: { "x-promptgate-case": long } }).chat.completions.create(chat),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(refused.code).toBe("INVALID_REQUEST");
    expect(refused.param).toBe("x-promptgate-case");
    expect(refused.message).not.toContain(long);
    const record = await gateway.deps.store.getCall(gateway.lastRef());
    expect(record).toMatchObject({ error: "INVALID_REQUEST", decision: "failed" });
    expect(record?.case).toBeUndefined();
    expect(JSON.stringify(record)).not.toContain(long);
  });

  it("refuse an over-long or non-ASCII call label, and take one of 256 printable characters", async () => {
    for (const label of ["y".repeat(257), "caf\u00e9"]) {
      const error = await rejectionOf(
        openai(gateway, { apiKey: gatewayKey, headers: { "x-promptgate-call": label } }).chat.completions.create(chat),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("x-promptgate-call");
    }
    const label = `step 1: ${"z".repeat(248)}`;
    await openai(gateway, { apiKey: gatewayKey, headers: { "x-promptgate-call": label } }).chat.completions.create(
      chat,
    );
    expect(await gateway.deps.store.getCall(gateway.lastRef())).toMatchObject({ call_label: label, decision: "sent" });
  });
});

describe("a prefix the store fails to remember", () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await inProcessGateway({}, (deps) => {
      deps.store.putResponseHistory = async () => {
        throw new Error("SQLITE_FULL: database or disk is full");
      };
    });
  });
  afterAll(() => gateway.close());

  it("leaves the openai SDK's answer a success, and is on the record and in the log", async () => {
    const answer = await openai(gateway).responses.create({ model: "gpt-test", input: "remember me" });
    expect(answer.output_text).toBeTruthy();
    const ref = gateway.lastRef();
    expect(await gateway.deps.store.getCall(ref)).toMatchObject({
      decision: "sent",
      upstream_status: 200,
      internal_error: { during: "remember-prefix", class: "Error" },
    });
    expect(internalErrorLines(gateway, ref)).toMatchObject([{ during: "remember-prefix" }]);
  });

  it("leaves a streamed answer whole, and is on its record", async () => {
    const stream = await openai(gateway).responses.create({ model: "gpt-test", input: "remember me", stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe("response.completed");
    expect(await gateway.deps.store.getCall(gateway.lastRef())).toMatchObject({
      internal_error: { during: "remember-prefix" },
    });
  });
});

describe("policy versions", () => {
  it("names the pinned version in the record of a call its case refuses with 409 POLICY_MISMATCH", async () => {
    const gateway = await inProcessGateway();
    try {
      const current = gateway.deps.policies.resolve("investigation.bounded");
      const earlier = await earlierVersion(gateway);
      const client = (ref: string) =>
        new OpenAI({
          apiKey: clientKey,
          baseURL: `http://gateway.test/policies/${ref}/openai/v1`,
          maxRetries: 0,
          fetch: gateway.fetch,
          defaultHeaders: { "x-promptgate-case": "mismatch-1" },
        });
      await client(current.ref).chat.completions.create(chat);
      const error = await rejectionOf(client(earlier).chat.completions.create(chat));
      expect(error).toBeInstanceOf(OpenAI.ConflictError);
      expect(await gateway.deps.store.getCall(gateway.lastRef())).toMatchObject({
        error: "POLICY_MISMATCH",
        policy: earlier,
      });
    } finally {
      await gateway.close();
    }
  });

  it("serves a version pinned by ref that another process stored after this one started", async () => {
    const database = tempDatabase();
    const changed = copyPolicies();
    editPolicy(changed, "investigation.bounded.toml", withLimit(25_000));
    const first = await inProcessGateway({ PROMPTGATE_DB: database, PROMPTGATE_POLICIES: copyPolicies() });
    const second = await inProcessGateway({ PROMPTGATE_DB: database, PROMPTGATE_POLICIES: changed });
    try {
      const pinned = second.deps.policies.resolve("investigation.bounded").ref;
      const client = new OpenAI({
        apiKey: clientKey,
        baseURL: `http://gateway.test/policies/${pinned}/openai/v1`,
        maxRetries: 0,
        fetch: first.fetch,
      });
      const { response } = await client.chat.completions
        .create({ ...chat, messages: [{ role: "user", content: "x".repeat(22_000) }] })
        .withResponse();
      expect(JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "{}")).toMatchObject({
        policy: pinned,
        limit_chars: 25_000,
      });
    } finally {
      await first.close();
      await second.close();
    }
  });
});

/** The ref of an earlier investigation.bounded, known to the gateway as one it served before. */
async function earlierVersion(gateway: InProcessGateway): Promise<string> {
  const database = tempDatabase();
  const changed = copyPolicies();
  editPolicy(changed, "investigation.bounded.toml", withLimit(21_000));
  const other = await inProcessGateway({ PROMPTGATE_DB: database, PROMPTGATE_POLICIES: changed });
  const version = other.deps.policies.resolve("investigation.bounded");
  await other.close();
  await gateway.deps.store.savePolicyVersion(version);
  gateway.deps.policies.add(version);
  return version.ref;
}

describe("a broken or failed stream", () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await inProcessGateway();
  });
  afterAll(() => gateway.close());

  it("records the break of a Gemini JSON-array stream (no alt=sse)", async () => {
    upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}]}');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const response = await gateway.fetch("http://gateway.test/gemini/v1beta/models/gemini-test:streamGenerateContent", {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": clientKey },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
    });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    const ref = response.headers.get("x-promptgate-ref") ?? "";
    await vi.waitFor(async () =>
      expect(await gateway.deps.store.getCall(ref)).toMatchObject({
        decision: "sent",
        error: "upstream",
        upstream_error: { class: "upstream" },
      }),
    );
  });

  it("relays nothing after a provider's error event it replaced", async () => {
    const delta = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
    upstream.answerWith(
      pacedEvents([
        delta("before"),
        'data: {"error":{"message":"upstream secret text","type":"server_error"}}\n\n',
        delta("AFTER-THE-ERROR"),
        "data: [DONE]\n\n",
      ]),
    );
    const response = await gateway.fetch("http://gateway.test/openai/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${clientKey}` },
      body: JSON.stringify({ ...chat, stream: true }),
    });
    const text = await response.text();
    expect(text).toContain("before");
    expect(text).toContain('"promptgate"');
    expect(text).not.toContain("upstream secret text");
    expect(text).not.toContain("AFTER-THE-ERROR");
    expect(text).not.toContain("[DONE]");
    expect(await gateway.deps.store.getCall(response.headers.get("x-promptgate-ref") ?? "")).toMatchObject({
      error: "upstream",
    });
  });
});
