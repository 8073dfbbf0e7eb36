import { describe, expect, it } from "vitest";
import type { Deps } from "../../src/deps.js";
import type { CallRecorder } from "../../src/pipeline/call-recorder.js";
import { startDeadline } from "../../src/pipeline/deadline.js";
import { type ProxiedCall, relayProxied } from "../../src/pipeline/relay-proxied.js";
import type { UpstreamCall } from "../../src/pipeline/upstream-call.js";
import type { PolicyVersion } from "../../src/policy/policy.js";
import type { CallRecord } from "../../src/record/call-record.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { openaiSurface } from "../../src/surfaces/openai/openai-surface.js";
import type { ProxyEndpoint } from "../../src/surfaces/surface.js";
import type { UpstreamResponse } from "../../src/transport/transport.js";
import { policyVersion, sha } from "../store/store-contract.js";
import { heldOutput } from "../support/held-output.js";

const encoder = new TextEncoder();
const path = "/responses/resp_bg";
const pending = { id: "resp_bg", chars: 1_000, outputKnown: false, expiresAt: 10_000 };

/** The stored-response route's endpoint, as the OpenAI surface matches it. */
function retrieveEndpoint(): ProxyEndpoint {
  const endpoint = openaiSurface.match("GET", path);
  if (endpoint?.kind !== "proxy") throw new Error("GET /responses/{id} is not a proxied route.");
  return endpoint;
}

function depsWithStore(): Deps {
  // Relaying reads only the store and the clock.
  return { store: memoryStore(), now: () => new Date(0) } as Pick<Deps, "store" | "now"> as Deps;
}

/** A provider's event stream of `frames`, then its end, or a break with `breakWith`. */
function eventStream(frames: string[], breakWith?: Error): UpstreamResponse {
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const frame = frames[index++];
      if (frame !== undefined) controller.enqueue(encoder.encode(frame));
      else if (breakWith !== undefined) controller.error(breakWith);
      else controller.close();
    },
  });
  return {
    status: 200,
    headers: { "content-type": "text/event-stream" },
    bytes: () => Promise.reject(new Error("A stream is not read whole.")),
    stream: () => stream,
  };
}

const frame = (value: unknown) => `event: x\ndata: ${JSON.stringify(value)}\n\n`;
const completed = {
  type: "response.completed",
  response: {
    id: "resp_bg",
    status: "completed",
    output: [{ type: "message", content: [{ type: "output_text", text: "twelve chars" }] }],
  },
};
const errorEvent = 'event: error\ndata: {"type":"error","code":"server_error","message":"secret upstream text"}\n\n';

function proxiedCall(): ProxiedCall {
  const request = new Request("http://gateway.test/openai/v1/responses/resp_bg?stream=true");
  const call = {
    surface: openaiSurface,
    provider: openaiSurface,
    request,
    url: new URL(request.url),
    deadline: startDeadline(60),
    secrets: () => [],
  } as Partial<UpstreamCall> as UpstreamCall;
  const policy: PolicyVersion = policyVersion("investigation.bounded", sha("a"));
  return { call, policy, recorder: recorderStub() };
}

/** A recorder that keeps the internal failures it is told of in `failures`. */
function recorderStub(): CallRecorder & { failures: unknown[] } {
  const failures: unknown[] = [];
  return {
    record: {} as CallRecord,
    failures,
    internal: (cause) => void failures.push(cause),
    settle: async () => undefined,
    hold: () => undefined,
  };
}

describe("relaying a proxied route's event stream", () => {
  it("passes the events through unchanged and records the final response before the client's stream ends", async () => {
    const deps = depsWithStore();
    await deps.store.putResponseHistory(pending);
    const frames = [frame({ type: "response.in_progress", response: { id: "resp_bg" } }), frame(completed)];
    const response = await relayProxied(
      deps,
      retrieveEndpoint(),
      path,
      eventStream(frames),
      { "x-promptgate-ref": "ref_1" },
      proxiedCall(),
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await response.text()).toBe(frames.join(""));
    expect(await deps.store.getResponseHistory("resp_bg", 0)).toEqual({
      ...pending,
      chars: 1_000 + heldOutput(completed.response),
      outputKnown: true,
    });
  });

  it("does not record the final response of a stream that breaks off before it", async () => {
    const deps = depsWithStore();
    await deps.store.putResponseHistory(pending);
    // The final event is cut in the middle: it never arrived whole.
    const upstream = eventStream([frame(completed).slice(0, 40)], new Error("reset"));
    const response = await relayProxied(deps, retrieveEndpoint(), path, upstream, {}, proxiedCall());
    await response.text();
    expect(await deps.store.getResponseHistory("resp_bg", 0)).toEqual(pending);
  });

  it("records the final response once its event arrived whole, though the provider's stream breaks after it", async () => {
    const deps = depsWithStore();
    await deps.store.putResponseHistory(pending);
    const upstream = eventStream([frame(completed)], new Error("reset"));
    const response = await relayProxied(deps, retrieveEndpoint(), path, upstream, {}, proxiedCall());
    expect(await response.text()).toBe(frame(completed));
    expect((await deps.store.getResponseHistory("resp_bg", 0))?.chars).toBe(1_000 + heldOutput(completed.response));
  });

  it("replaces a provider's error event with the surface's native one, without the provider's text", async () => {
    const response = await relayProxied(
      depsWithStore(),
      retrieveEndpoint(),
      path,
      eventStream([errorEvent]),
      { "x-promptgate-ref": "ref_1" },
      proxiedCall(),
    );
    const text = await response.text();
    expect(text).not.toContain("secret upstream text");
    expect(text).toContain('"promptgate"');
    expect(text).toContain("ref_1");
  });
});

describe("relaying a proxied route's whole answer", () => {
  it("relays a successful deletion answered with 204 and no body, and forgets the response", async () => {
    const deps = depsWithStore();
    await deps.store.putResponseHistory(pending);
    const endpoint = openaiSurface.match("DELETE", path);
    if (endpoint?.kind !== "proxy") throw new Error("DELETE /responses/{id} is not a proxied route.");
    const upstream: UpstreamResponse = {
      status: 204,
      headers: {},
      bytes: async () => new Uint8Array(new ArrayBuffer(0)),
      stream: () => new ReadableStream(),
    };
    const response = await relayProxied(deps, endpoint, path, upstream, {}, proxiedCall());
    expect(response.status).toBe(204);
    expect(await deps.store.getResponseHistory("resp_bg", 0)).toBeUndefined();
  });
});
