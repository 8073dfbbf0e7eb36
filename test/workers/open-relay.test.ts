import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { createIsolateDeps } from "../../src/runtime/workers/worker-deps.js";

// Contract section 11 on Workers, which have no loopback: in pass-through mode a provider call that would use a
// server-held key is 403 account_selection unless PROMPTGATE_OPEN_RELAY=true. The pool's env sets it and
// GEMINI_API_KEY (vitest.workers.config.ts); these tests take it away again.

async function app(variables: Record<string, string>) {
  const deps = await createIsolateDeps({ ...env, ...variables });
  return createApp({ ...deps, recordCall: async () => {} });
}

function routedGemini(): Request {
  return new Request("http://promptgate.test/openai/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
    body: JSON.stringify({ model: "gemini-2.5-flash", input: "Hello" }),
  });
}

function nativeGemini(key: string | undefined): Request {
  return new Request("http://promptgate.test/gemini/v1beta/models/gemini-2.5-flash:generateContent", {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { "x-goog-api-key": key }) },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] }),
  });
}

describe("the open-relay rule on Workers", () => {
  it("refuses a routed call that would use the server-held key in pass-through mode, naming PROMPTGATE_OPEN_RELAY", async () => {
    const response = await (await app({ PROMPTGATE_OPEN_RELAY: "false" })).request(routedGemini());
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).toContain("account_selection");
    expect(text).toContain("PROMPTGATE_OPEN_RELAY");
  });

  it("refuses a native call without a credential that would use the server-held key, and sends one with the client's own", async () => {
    const closed = await app({ PROMPTGATE_OPEN_RELAY: "false" });
    expect((await closed.request(nativeGemini(undefined))).status).toBe(403);
    expect((await closed.request(nativeGemini("client-gemini-key"))).status).toBe(200);
  });

  it("sends them with PROMPTGATE_OPEN_RELAY=true, and with gateway keys", async () => {
    expect((await (await app({ PROMPTGATE_OPEN_RELAY: "true" })).request(routedGemini())).status).toBe(200);
    const keyed = await app({ PROMPTGATE_OPEN_RELAY: "false", PROMPTGATE_KEYS: "sk-client" });
    expect((await keyed.request(routedGemini())).status).toBe(200);
  });
});
