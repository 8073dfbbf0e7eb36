import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { readConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { newRef } from "../../src/errors/ref.js";
import { identifyPolicies } from "../../src/policy/identify-policy.js";
import { modelTableOf } from "../../src/routing/model-table.js";
import { policies as bundledPolicies } from "../../src/runtime/workers/generated/assets.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { surfaceNames } from "../../src/surfaces/surfaces.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";

// The window toolkit over HTTP (POST /promptgate/window/fragment), through app.request(): runs on Node and in
// workerd (test/http is shared).

async function app(environment: Record<string, string> = {}) {
  const deps: Deps = {
    config: readConfig({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG: "silent", ...environment }),
    policies: await identifyPolicies(bundledPolicies),
    models: modelTableOf(undefined, surfaceNames),
    transport: fetchTransport(createSimulatedProvider().fetch),
    schemas: new Map(),
    store: memoryStore(),
    recordCall: async () => {},
    newRef,
    now: () => new Date(),
  };
  return createApp(deps);
}

function post(body: string, headers: Record<string, string> = {}): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json", ...headers }, body };
}

describe("POST /promptgate/window/fragment", () => {
  it("answers a value's pages as json_fragment objects", async () => {
    const gateway = await app();
    const response = await gateway.request(
      "/promptgate/window/fragment",
      post(JSON.stringify({ value: { rows: ["😀".repeat(30)] }, page_chars: 16 })),
    );
    expect(response.status).toBe(200);
    const { fragments } = (await response.json()) as { fragments: { text: string; pages: number }[] };
    expect(fragments.map((page) => page.text).join("")).toBe(JSON.stringify({ rows: ["😀".repeat(30)] }));
    expect(fragments[0]?.pages).toBe(fragments.length);
  });

  it.each([
    ["no value", JSON.stringify({ page_chars: 10 })],
    ["a page size of zero", JSON.stringify({ value: 1, page_chars: 0 })],
    ["a page size that is not a number", JSON.stringify({ value: 1, page_chars: "10" })],
    ["a body that is not JSON", "{"],
    ["duplicate keys", '{"value": 1, "value": 2}'],
  ])("refuses %s with a plain 400 INVALID_REQUEST and a ref", async (_name, body) => {
    const gateway = await app();
    const response = await gateway.request("/promptgate/window/fragment", post(body));
    expect(response.status).toBe(400);
    const error = ((await response.json()) as { error: { code: string; promptgate: { ref: string } } }).error;
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.promptgate.ref).toMatch(/^ref_[0-9a-f]{16}$/);
  });

  it("asks for a gateway key where keys are configured", async () => {
    const gateway = await app({ PROMPTGATE_KEYS: "pg-key" });
    const refused = await gateway.request("/promptgate/window/fragment", post(JSON.stringify({ value: 1 })));
    expect(refused.status).toBe(401);
    const accepted = await gateway.request(
      "/promptgate/window/fragment",
      post(JSON.stringify({ value: 1 }), { authorization: "Bearer pg-key" }),
    );
    expect(accepted.status).toBe(200);
  });
});
