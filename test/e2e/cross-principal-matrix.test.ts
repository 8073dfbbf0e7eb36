import { describe, expect, it } from "vitest";
import { principalOf } from "../../src/pipeline/principal.js";
import {
  evidenceRequests,
  expectUnknownToSecond,
  requestFor,
  responseRequests,
  type Send,
  sourceIndexRequests,
} from "../support/cross-principal.js";
import { type Gateway, gatewayOn, stores } from "../support/session-gateway.js";

// The cross-principal matrix (issue 52): two gateway keys; the first makes a session, an answer job, evidence and a
// source index; the second sends every route and method that names one of them by id, and gets exactly what an
// unknown id gets, with nothing sent upstream; then the first still has each as it made it. On every store the
// session tests run on (memory, SQLite, PostgreSQL where a server is configured).

const keyA = "gk-matrix-alpha-1234";
const keyB = "gk-matrix-beta-5678";
const base = "/openai/v1";

function sendTo(gateway: Gateway): Send {
  return async (key, request, id) => gateway.app.fetch(requestFor("http://gateway.test", key, request, id));
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

/** Polls a job as its maker until it ended (real time, at most ~5 s). */
async function ended(gateway: Gateway, id: string): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const polled = await json(
      await sendTo(gateway)(keyA, { name: "poll", method: "GET", path: `${base}/responses/{id}` }, id),
    );
    if (["completed", "failed", "cancelled"].includes(String(polled.status))) return polled;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`job ${id} did not end`);
}

describe.each(stores)("the second key learns nothing of the first's state, on the %s store", (_name, makeStore) => {
  it("sessions: every route naming the first key's stored response answers as for an unknown id", async () => {
    const gateway = await gatewayOn(makeStore, { PROMPTGATE_KEYS: `${keyA},${keyB}` });
    const send = sendTo(gateway);
    const made = await send(
      keyA,
      { name: "start", method: "POST", path: `${base}/responses`, body: { model: "gpt-4.1", input: "mine" } },
      "",
    );
    expect(made.status).toBe(200);
    const id = String((await json(made)).id);
    const statuses = await expectUnknownToSecond(send, () => gateway.sent.length, keyB, responseRequests(base), id);
    expect(statuses["GET the response"]).toBe(404);
    expect(statuses["continue it (previous_response_id)"]).toBe(400);
    // The first key's session is still whole: retrieved, and continued.
    expect((await send(keyA, responseRequests(base)[0] as never, id)).status).toBe(200);
    expect((await send(keyA, responseRequests(base)[4] as never, id)).status).toBe(200);
  });

  it("answer jobs: every route naming the first key's job answers as for an unknown id", async () => {
    const gateway = await gatewayOn(makeStore, { PROMPTGATE_KEYS: `${keyA},${keyB}` });
    const send = sendTo(gateway);
    const made = await send(
      keyA,
      {
        name: "start a job",
        method: "POST",
        path: `${base}/responses`,
        body: { model: "gpt-4.1", input: "mine", background: true },
      },
      "",
    );
    expect(made.status).toBe(200);
    const id = String((await json(made)).id);
    expect((await ended(gateway, id)).status).toBe("completed");
    const statuses = await expectUnknownToSecond(send, () => gateway.sent.length, keyB, responseRequests(base), id);
    expect(statuses["GET the response"]).toBe(404);
    expect((await ended(gateway, id)).status).toBe("completed");
  });

  it("evidence: recall, DELETE and PUT of the first key's id answer as for an unknown id, and leave it whole", async () => {
    const gateway = await gatewayOn(makeStore, { PROMPTGATE_KEYS: `${keyA},${keyB}` });
    const send = sendTo(gateway);
    const put = { name: "keep", method: "PUT", path: "/promptgate/window/evidence/{id}", body: { rows: ["first"] } };
    expect((await send(keyA, put, "E-alpha-0001")).status).toBe(200);
    const statuses = await expectUnknownToSecond(
      send,
      () => gateway.sent.length,
      keyB,
      evidenceRequests,
      "E-alpha-0001",
    );
    expect(statuses).toEqual({ "recall a page of it": 400, "DELETE it": 204, "PUT over it": 200 });
    // The first key still recalls its own result, not the second's.
    const recalled = await send(keyA, evidenceRequests[0] as never, "E-alpha-0001");
    expect(recalled.status).toBe(200);
    expect((await json(recalled)).text).toBe(JSON.stringify({ rows: ["first"] }));
  });

  it("source indexes: a call naming it, DELETE and PUT answer as for an unknown id, and leave it whole", async () => {
    const gateway = await gatewayOn(makeStore, { PROMPTGATE_KEYS: `${keyA},${keyB}` });
    const send = sendTo(gateway);
    const put = { name: "register", method: "PUT", path: "/promptgate/window/sources/{id}", body: { sources: ["A1"] } };
    expect((await send(keyA, put, "S-alpha-0001")).status).toBe(200);
    const requests = sourceIndexRequests(base);
    const statuses = await expectUnknownToSecond(send, () => gateway.sent.length, keyB, requests, "S-alpha-0001");
    expect(statuses).toEqual({ "name it on a call (x-promptgate-sources)": 400, "DELETE it": 204, "PUT over it": 200 });
    const kept = await gateway.store.getSourceIndex(await principalOf(gateway.store, keyA), "S-alpha-0001", 0);
    expect(kept?.sources).toEqual(["A1"]);
    expect((await send(keyA, requests[0] as never, "S-alpha-0001")).status).toBe(200);
  });
});
