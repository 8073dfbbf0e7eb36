import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { createIsolateDeps } from "../../src/runtime/workers/worker-deps.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";
import {
  evidenceRequests,
  expectUnknownToSecond,
  type IdRequest,
  requestFor,
  responseRequests,
  type Send,
  sourceIndexRequests,
} from "../support/cross-principal.js";

// test/e2e/cross-principal-matrix.test.ts inside workerd: the app on the isolate's own dependencies (D1 keeps the
// state), two gateway keys, and OpenAI's simulated stand-in as the one upstream both share, behind a counter. The
// second key's every route naming the first's stored response, evidence or source index answers as for an unknown
// id, and sends nothing upstream.

const keyA = "gw-key-edge-matrix-alpha";
const keyB = "gw-key-edge-matrix-beta";
const base = "/openai/v1";

let sent = 0;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  const isolate = await createIsolateDeps({
    ...env,
    PROMPTGATE_KEYS: `${keyA},${keyB}`,
    OPENAI_API_KEY: "sk-edge",
    PROMPTGATE_UPSTREAM_OPENAI: "http://upstream.promptgate.invalid/openai/v1",
  });
  const simulated = createSimulatedProvider();
  const upstream = async (request: Request) => {
    sent += 1;
    return simulated.fetch(request);
  };
  // Answer jobs run in the isolate, as the worker's own entry runs them (there with waitUntil).
  const jobs = { local: new Map(), keep: () => {} };
  app = createApp({ ...isolate, transport: fetchTransport(upstream), recordCall: async () => undefined, jobs });
});
beforeEach(() => {
  sent = 0;
});

const send: Send = async (key, request, id) => app.fetch(requestFor("http://promptgate.test", key, request, id));

async function make(request: IdRequest, id = ""): Promise<Record<string, unknown>> {
  const response = await send(keyA, request, id);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe("in workerd, the second key learns nothing of the first's state", () => {
  it("sessions: every route naming the first key's stored response answers as for an unknown id", async () => {
    const start = { name: "start", method: "POST", path: `${base}/responses`, body: { model: "gpt-4.1", input: "x" } };
    const id = String((await make(start)).id);
    const statuses = await expectUnknownToSecond(send, () => sent, keyB, responseRequests(base), id);
    expect(statuses["GET the response"]).toBe(404);
    expect((await send(keyA, responseRequests(base)[0] as IdRequest, id)).status).toBe(200);
  });

  it("answer jobs: every route naming the first key's job answers as for an unknown id", async () => {
    const start = {
      name: "start a job",
      method: "POST",
      path: `${base}/responses`,
      body: { model: "gpt-4.1", input: "x", background: true },
    };
    const id = String((await make(start)).id);
    const poll = responseRequests(base)[0] as IdRequest;
    const ended = async () => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const job = (await (await send(keyA, poll, id)).json()) as { status: string };
        if (["completed", "failed", "cancelled"].includes(job.status)) return job.status;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return "running";
    };
    expect(await ended()).toBe("completed");
    sent = 0;
    const statuses = await expectUnknownToSecond(send, () => sent, keyB, responseRequests(base), id);
    expect(statuses["GET the response"]).toBe(404);
    expect(await ended()).toBe("completed");
  });

  it("evidence: recall, DELETE and PUT of the first key's id answer as for an unknown id, and leave it whole", async () => {
    await make(
      { name: "keep", method: "PUT", path: "/promptgate/window/evidence/{id}", body: { a: 1 } },
      "E-edge-0001",
    );
    const statuses = await expectUnknownToSecond(send, () => sent, keyB, evidenceRequests, "E-edge-0001");
    expect(statuses).toEqual({ "recall a page of it": 400, "DELETE it": 204, "PUT over it": 200 });
    const recalled = await send(keyA, evidenceRequests[0] as IdRequest, "E-edge-0001");
    expect(((await recalled.json()) as { text: string }).text).toBe('{"a":1}');
  });

  it("source indexes: a call naming it, DELETE and PUT answer as for an unknown id, and leave it whole", async () => {
    const put = { name: "register", method: "PUT", path: "/promptgate/window/sources/{id}", body: { sources: ["A1"] } };
    await make(put, "S-edge-0001");
    const requests = sourceIndexRequests(base);
    const statuses = await expectUnknownToSecond(send, () => sent, keyB, requests, "S-edge-0001");
    expect(statuses).toEqual({ "name it on a call (x-promptgate-sources)": 400, "DELETE it": 204, "PUT over it": 200 });
    expect((await send(keyA, requests[0] as IdRequest, "S-edge-0001")).status).toBe(200);
  });
});
