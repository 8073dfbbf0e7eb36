import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app.js";
import type { Deps } from "../../src/deps.js";
import { identify } from "../../src/policy/identify-policy.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { consoleCallLog } from "../../src/runtime/workers/console-call-log.js";
import { d1Store } from "../../src/runtime/workers/d1-store.js";
import { migrations, policies } from "../../src/runtime/workers/generated/assets.js";
import { createIsolateDeps } from "../../src/runtime/workers/worker-deps.js";
import { validateAnswer } from "../../src/schema/diagnostics.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";

// The same behaviour as test/e2e/nothing-lost.test.ts inside workerd: the app on the isolate's own
// dependencies (D1, the console log), with a test's upstream and recorder where a test needs them.

vi.mock(import("../../src/schema/diagnostics.js"), async (importOriginal) => {
  const original = await importOriginal();
  return { ...original, validateAnswer: vi.fn(original.validateAnswer) };
});

afterEach(() => {
  vi.restoreAllMocks();
});

type Json = Record<string, unknown>;

const upstreamOrigin = "http://upstream.promptgate.invalid";
const clientKey = "sk-client-edge-4711";
const gatewayKey = "gw-key-edge-0815";

/** A test's upstream: what the OpenAI surface's provider answers. */
type Upstream = (request: Request) => Promise<Response>;

interface EdgeGateway {
  deps: Deps;
  records: CallRecord[];
  /** The console lines, parsed, and the console method that wrote each. */
  lines: Array<Json & { level: string }>;
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

async function edgeGateway(
  variables: Record<string, string> = {},
  options: {
    upstream?: Upstream;
    recordCall?: (record: CallRecord) => Promise<void>;
    store?: Partial<Deps["store"]>;
  } = {},
): Promise<EdgeGateway> {
  const isolate = await createIsolateDeps({
    ...env,
    PROMPTGATE_UPSTREAM_OPENAI: `${upstreamOrigin}/openai/v1`,
    ...variables,
  });
  const records: CallRecord[] = [];
  const lines: Array<Json & { level: string }> = [];
  for (const method of ["log", "warn", "error"] as const) {
    vi.spyOn(console, method).mockImplementation((text: unknown) => {
      if (typeof text === "string" && text.startsWith("{")) {
        lines.push({ ...(JSON.parse(text) as Json & { level: string }), written_with: method });
      }
    });
  }
  const upstream = options.upstream ?? ((request: Request) => Promise.resolve(Response.json({ url: request.url })));
  const deps: Deps = {
    ...isolate,
    store: { ...isolate.store, ...options.store },
    transport: fetchTransport(upstream),
    log: consoleCallLog("info"),
    recordCall:
      options.recordCall ??
      (async (record) => {
        records.push(record);
      }),
  };
  const app = createApp(deps);
  return {
    deps,
    records,
    lines,
    fetch: async (path, init) => app.fetch(new Request(`http://promptgate.test${path}`, init)),
  };
}

function chat(headers: Record<string, string> = {}, extra: Json = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${clientKey}`, ...headers },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hello" }], ...extra }),
  };
}

/** An event-stream answer of `frames`, then its end or a break. */
function eventStream(frames: readonly string[], breakWith?: Error, contentType = "text/event-stream"): Response {
  const encoder = new TextEncoder();
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const frame = frames[index++];
      if (frame !== undefined) controller.enqueue(encoder.encode(frame));
      else if (breakWith !== undefined) controller.error(breakWith);
      else controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": contentType } });
}

const delta = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

describe("an internal error on the worker", () => {
  it("is logged once with console.error: its ref, class and a stack with keys redacted", async () => {
    const gateway = await edgeGateway(
      {},
      {
        store: {
          freezeCasePolicy: async () => {
            throw new TypeError(`freeze failed for ${clientKey}`);
          },
        },
      },
    );
    const response = await gateway.fetch("/openai/v1/chat/completions", chat({ "x-promptgate-case": "edge-broken" }));
    expect(response.status).toBe(500);
    const ref = response.headers.get("x-promptgate-ref");
    const errors = gateway.lines.filter((line) => line.event === "internal_error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ level: "error", written_with: "error", ref, class: "TypeError", during: "call" });
    expect(String(errors[0]?.stack)).toContain("freeze failed for [redacted]");
    expect(JSON.stringify(gateway.lines)).not.toContain(clientKey);
    expect(gateway.records).toMatchObject([{ ref, error: "internal", internal_error: { class: "TypeError" } }]);
  });
});

describe("a stream on the worker", () => {
  it("keeps its final event until the record is kept", async () => {
    let keep: () => void = () => undefined;
    const kept = new Promise<void>((resolve) => {
      keep = resolve;
    });
    const records: CallRecord[] = [];
    const gateway = await edgeGateway(
      {},
      {
        upstream: async () => eventStream([delta("one"), "data: [DONE]\n\n"]),
        recordCall: (record) => {
          records.push(record);
          return kept;
        },
      },
    );
    const response = await gateway.fetch("/openai/v1/chat/completions", chat({}, { stream: true }));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readAll = (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        text += decoder.decode(chunk.value, { stream: true });
      }
    })();
    await vi.waitFor(() => expect(records).toHaveLength(1));
    // The earlier event is passed on at once; the last one waits for the record.
    await vi.waitFor(() => expect(text).toContain("one"));
    expect(text).not.toContain("[DONE]");
    keep();
    await readAll;
    expect(text).toContain("[DONE]");
  });

  it("ends as the provider sent it when its end fails, with one record of the failure", async () => {
    vi.mocked(validateAnswer).mockImplementationOnce(() => {
      throw new TypeError("the validator failed");
    });
    const gateway = await edgeGateway(
      {},
      { upstream: async () => eventStream([delta('{"answer":'), delta('"yes"}'), "data: [DONE]\n\n"]) },
    );
    // A named schema: the worker validates with precompiled validators only.
    const response = await gateway.fetch(
      "/openai/v1/chat/completions",
      chat({ "x-promptgate-schema": "investigation_bootstrap_v22" }, { stream: true }),
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("[DONE]");
    expect(vi.mocked(validateAnswer)).toHaveBeenCalled();
    await vi.waitFor(() => expect(gateway.records.length).toBeGreaterThan(0));
    const record = gateway.records.at(-1);
    expect(record).toMatchObject({ decision: "sent", internal_error: { during: "stream", class: "TypeError" } });
    expect(gateway.lines.filter((line) => line.event === "internal_error")).toHaveLength(1);
  });

  it("relays nothing after a provider's error event it replaced", async () => {
    const gateway = await edgeGateway(
      {},
      {
        upstream: async () =>
          eventStream([
            delta("before"),
            'data: {"error":{"message":"upstream secret text","type":"server_error"}}\n\n',
            delta("AFTER-THE-ERROR"),
            "data: [DONE]\n\n",
          ]),
      },
    );
    const text = await (await gateway.fetch("/openai/v1/chat/completions", chat({}, { stream: true }))).text();
    expect(text).toContain("before");
    expect(text).not.toContain("AFTER-THE-ERROR");
    expect(text).not.toContain("upstream secret text");
    expect(gateway.records).toMatchObject([{ error: "upstream" }]);
  });
});

describe("what the worker keeps of a failure that leaves the answer whole, or breaks it", () => {
  it("answers a Responses call whose history the store fails to take, and records the failure", async () => {
    const simulated = createSimulatedProvider();
    const gateway = await edgeGateway(
      {},
      {
        upstream: (request) => simulated.fetch(request),
        store: {
          putResponseHistory: async () => {
            throw new Error("D1_ERROR: database is full");
          },
        },
      },
    );
    const response = await gateway.fetch("/openai/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${clientKey}` },
      body: JSON.stringify({ model: "gpt-test", input: "remember me" }),
    });
    expect(response.status).toBe(200);
    expect(gateway.records).toMatchObject([{ decision: "sent", internal_error: { during: "remember-prefix" } }]);
    expect(gateway.lines.filter((line) => line.event === "internal_error")).toMatchObject([
      { written_with: "error", during: "remember-prefix" },
    ]);
  });

  it("records the break of a Gemini JSON-array stream (no alt=sse)", async () => {
    const gateway = await edgeGateway(
      { PROMPTGATE_UPSTREAM_GEMINI: `${upstreamOrigin}/gemini` },
      {
        upstream: async () =>
          eventStream(
            ['[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}]}'],
            new Error("connection reset"),
            "application/json",
          ),
      },
    );
    const response = await gateway.fetch("/gemini/v1beta/models/gemini-test:streamGenerateContent", {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": clientKey },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
    });
    await expect(response.text()).rejects.toThrow();
    await vi.waitFor(() =>
      expect(gateway.records).toMatchObject([
        { decision: "sent", error: "upstream", upstream_error: { class: "upstream" } },
      ]),
    );
  });
});

describe("requests refused before authentication on the worker", () => {
  const long = "x".repeat(7_000);

  it("write no record and no line per request, only a count", async () => {
    const gateway = await edgeGateway({ PROMPTGATE_KEYS: gatewayKey, OPENAI_API_KEY: "sk-server-edge" });
    for (let request = 0; request < 50; request++) {
      const response = await gateway.fetch(
        "/openai/v1/chat/completions",
        chat({ authorization: "Bearer gw-key-wrong", "x-promptgate-case": long, "x-promptgate-call": long }),
      );
      expect(response.status).toBe(401);
    }
    expect(gateway.records).toEqual([]);
    expect(gateway.lines.length).toBeLessThanOrEqual(1);
    expect(JSON.stringify(gateway.lines)).not.toContain(long);
  });

  it("refuse an over-long header of a known client with 400 INVALID_REQUEST, recorded without it", async () => {
    const gateway = await edgeGateway({ PROMPTGATE_KEYS: gatewayKey, OPENAI_API_KEY: "sk-server-edge" });
    const response = await gateway.fetch(
      "/openai/v1/chat/completions",
      chat({ authorization: `Bearer ${gatewayKey}`, "x-promptgate-call": long }),
    );
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: Json };
    expect(error).toMatchObject({ code: "INVALID_REQUEST", param: "x-promptgate-call" });
    expect(gateway.records).toHaveLength(1);
    expect(JSON.stringify(gateway.records)).not.toContain(long);
  });
});

describe("policy versions on the worker", () => {
  function boundedPolicy() {
    const found = policies.find((entry) => entry.policy.name === "investigation.bounded");
    if (found === undefined) throw new Error("investigation.bounded is not bundled.");
    return structuredClone(found.policy);
  }

  it("serves a version pinned by ref that was stored in D1 after the isolate started", async () => {
    const warmUp = await exports.default.fetch(new Request("http://promptgate.test/healthz"));
    expect(warmUp.status).toBe(200);
    const later = await identify(
      { ...boundedPolicy(), window: { ...boundedPolicy().window, limit_chars: 27_000 } },
      "",
    );
    await d1Store(env.DB, migrations).savePolicyVersion({ ...later, source: "policies/investigation.bounded.toml" });
    const response = await exports.default.fetch(
      new Request(`http://promptgate.test/policies/${later.ref}/openai/v1/chat/completions`, chat()),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "{}")).toMatchObject({
      policy: later.ref,
      limit_chars: 27_000,
    });
  });

  it("names the pinned version in the record of a call its case refuses with 409", async () => {
    const earlier = await identify(
      { ...boundedPolicy(), window: { ...boundedPolicy().window, limit_chars: 26_000 } },
      "",
    );
    const gateway = await edgeGateway();
    gateway.deps.policies.add({ ...earlier, source: "" });
    const caseHeaders = { "x-promptgate-case": `edge-mismatch-${Date.now()}` };
    expect(
      (await gateway.fetch("/policies/investigation.bounded/openai/v1/chat/completions", chat(caseHeaders))).status,
    ).toBe(200);
    const refused = await gateway.fetch(`/policies/${earlier.ref}/openai/v1/chat/completions`, chat(caseHeaders));
    expect(refused.status).toBe(409);
    expect(gateway.records.at(-1)).toMatchObject({ error: "POLICY_MISMATCH", policy: earlier.ref });
  });
});
