import { beforeAll, describe, expect, it } from "vitest";
import { memoryStore } from "../../src/store/memory-store.js";
import { appUnderTest, type GatewayApp } from "../support/app-under-test.js";
import { inProcessUpstream } from "../support/in-process-upstream.js";

const adminKey = "admin-key-for-tests";
const marker = "PROMPT-MARKER-7f3a";
let app: GatewayApp;

/** The app over an in-process upstream, keeping its records in its store as the runtimes do. */
async function gatewayApp(environment: Record<string, string> = {}): Promise<GatewayApp> {
  const upstream = inProcessUpstream();
  return (
    await appUnderTest({ ...upstream.environment, ...environment }, memoryStore(), upstream.fetch, {
      keepRecords: true,
    })
  ).app;
}

beforeAll(async () => {
  app = await gatewayApp({ PROMPTGATE_ADMIN_KEY: adminKey });
});

async function chat(content: string, caseId: string): Promise<Response> {
  return app.request("/policies/investigation.bounded/openai/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", "x-promptgate-case": caseId, "x-promptgate-call": "bootstrap" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content }] }),
  });
}

async function admin(path: string, key = adminKey): Promise<Response> {
  return app.request(`/promptgate/admin${path}`, { headers: { authorization: `Bearer ${key}` } });
}

/** Records are written without waiting; give the store a moment. */
async function callsOf(caseId: string): Promise<Array<Record<string, unknown>>> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const body = (await (await admin(`/calls?case=${caseId}`)).json()) as { calls: Array<Record<string, unknown>> };
    if (body.calls.length > 0) return body.calls;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return [];
}

describe("the call record behind the admin key", () => {
  it("records an accepted call with its policy, case, label, sizes, decision and upstream status", async () => {
    const response = await chat(`hello ${marker}`, "case-accepted");
    expect(response.status).toBe(200);
    const [call] = await callsOf("case-accepted");
    expect(call).toMatchObject({
      ref: response.headers.get("x-promptgate-ref"),
      case: "case-accepted",
      call_label: "bootstrap",
      surface: "openai",
      decision: "sent",
      upstream_status: 200,
      preflight: { check: "preflight", message_chars: 6 + marker.length },
      provider_check: { check: "provider" },
    });
    expect(String(call?.policy)).toMatch(/^investigation\.bounded@[0-9a-f]{12}$/);
    expect(JSON.stringify(call)).not.toContain(marker);
  });

  it("records a rejected call with the failing check and the decision, never sending it", async () => {
    const response = await chat("x".repeat(19_000), "case-rejected");
    expect(response.status).toBe(400);
    const [call] = await callsOf("case-rejected");
    expect(call).toMatchObject({ decision: "rejected", error: "INVESTIGATION_PROMPT_LIMIT" });
    expect(call?.upstream_status).toBeUndefined();
    expect(call?.preflight).toMatchObject({ conservative_total_chars: 20_500 });
  });

  it("returns one call by its ref", async () => {
    const response = await chat("by ref", "case-ref");
    const ref = response.headers.get("x-promptgate-ref") ?? "";
    await callsOf("case-ref");
    const call = (await (await admin(`/calls/${ref}`)).json()) as Record<string, unknown>;
    expect(call.ref).toBe(ref);
  });

  it("refuses a wrong admin key with 401 and a message that echoes nothing", async () => {
    const response = await admin("/calls?case=x", "wrong-key-123");
    expect(response.status).toBe(401);
    expect(await response.text()).not.toContain("wrong-key-123");
  });

  it("answers an unknown ref with 404", async () => {
    expect((await admin("/calls/ref_0000000000000000")).status).toBe(404);
  });
});

describe("the admin routes without an admin key", () => {
  it("do not exist", async () => {
    const plain = await gatewayApp();
    const response = await plain.request("/promptgate/admin/calls?case=x");
    expect(response.status).toBe(404);
  });
});
