import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { createIsolateDeps } from "../../src/runtime/workers/worker-deps.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { fetchTransport } from "../../src/transport/fetch-transport.js";

// test/e2e/cached-contents-principals.test.ts inside workerd, with raw fetch: the app on the isolate's own
// dependencies (D1 keeps the cached prefixes), two gateway keys, and Gemini's simulated stand-in as the one
// upstream every key shares, behind a recorder of what reached it.

const keyA = "gw-key-edge-alpha-1234";
const keyB = "gw-key-edge-beta-5678";
const unknownName = "cachedContents/000000000000";
const upstreamOrigin = "http://upstream.promptgate.invalid";

/** What reached the upstream, as `METHOD /path?query`. */
const received: string[] = [];
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  const isolate = await createIsolateDeps({
    ...env,
    PROMPTGATE_KEYS: `${keyA},${keyB}`,
    GEMINI_API_KEY: "AIzaServerGeminiKeyEdge",
    PROMPTGATE_UPSTREAM_GEMINI: `${upstreamOrigin}/gemini`,
  });
  const simulated = createSimulatedProvider();
  const upstream = async (request: Request) => {
    const url = new URL(request.url);
    received.push(`${request.method} ${url.pathname}${url.search}`);
    return simulated.fetch(request);
  };
  app = createApp({ ...isolate, transport: fetchTransport(upstream), recordCall: async () => undefined });
});
beforeEach(() => {
  received.length = 0;
});

interface Seen {
  status: number;
  body: unknown;
}

async function seenOf(apiKey: string, method: string, path: string, body?: unknown): Promise<Seen> {
  const response = await app.fetch(
    new Request(`http://promptgate.test/policies/investigation.bounded/gemini${path}`, {
      method,
      headers: { "x-goog-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  const text = await response.text();
  const parsed = text === "" ? "" : (JSON.parse(text) as { error?: { promptgate?: { ref?: string } } });
  if (typeof parsed === "object" && parsed.error?.promptgate !== undefined) parsed.error.promptgate.ref = "(ref)";
  return { status: response.status, body: parsed };
}

async function createCache(apiKey: string): Promise<string> {
  const created = await seenOf(apiKey, "POST", "/v1beta/cachedContents", {
    model: "models/gemini-test",
    systemInstruction: { parts: [{ text: "Keep this to yourself." }] },
    contents: [{ role: "user", parts: [{ text: "A's confidential case file." }] }],
  });
  expect(created.status).toBe(200);
  return (created.body as { name: string }).name;
}

const contents = [{ role: "user", parts: [{ text: "Repeat." }] }];

function routes(name: string): { method: string; path: string; body?: unknown }[] {
  return [
    { method: "GET", path: `/v1beta/${name}` },
    { method: "PATCH", path: `/v1beta/${name}`, body: { ttl: "1s" } },
    { method: "DELETE", path: `/v1beta/${name}` },
    { method: "POST", path: "/v1beta/models/gemini-test:generateContent", body: { contents, cachedContent: name } },
    {
      method: "POST",
      path: "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
      body: { contents, cachedContent: name },
    },
    {
      method: "POST",
      path: "/v1beta/models/gemini-test:countTokens",
      body: { generateContentRequest: { model: "models/gemini-test", contents, cachedContent: name } },
    },
  ];
}

describe("key B and key A's cached contents on the worker", () => {
  it("answers B for A's name on every route exactly as for an unknown name, and sends the provider nothing", async () => {
    const name = await createCache(keyA);
    received.length = 0;
    const unknown = routes(unknownName);
    for (const [index, route] of routes(name).entries()) {
      const other = unknown[index] as (typeof unknown)[number];
      const seen = await seenOf(keyB, route.method, route.path, route.body);
      expect(seen, `${route.method} ${route.path}`).toEqual(await seenOf(keyB, other.method, other.path, other.body));
      expect([404, 400]).toContain(seen.status);
    }
    expect(received).toEqual([]);
    expect((await seenOf(keyA, "GET", `/v1beta/${name}`)).status).toBe(200);
  });

  it("lists B only its own caches, and A its own", async () => {
    const ofA = await createCache(keyA);
    const ofB = await createCache(keyB);
    const listed = async (apiKey: string) =>
      JSON.stringify((await seenOf(apiKey, "GET", "/v1beta/cachedContents?pageSize=1000")).body);
    expect(await listed(keyB)).toContain(ofB);
    expect(await listed(keyB)).not.toContain(ofA);
    expect(await listed(keyA)).toContain(ofA);
    expect(await listed(keyA)).not.toContain(ofB);
  });

  it("lets A use, update and delete its own cache", async () => {
    const name = await createCache(keyA);
    received.length = 0;
    expect(
      (await seenOf(keyA, "POST", "/v1beta/models/gemini-test:generateContent", routes(name)[3]?.body)).status,
    ).toBe(200);
    expect((await seenOf(keyA, "PATCH", `/v1beta/${name}`, { ttl: "7200s" })).status).toBe(200);
    expect((await seenOf(keyA, "DELETE", `/v1beta/${name}`)).status).toBe(200);
    expect(received).toEqual([
      "POST /gemini/v1beta/models/gemini-test:generateContent",
      `PATCH /gemini/v1beta/${name}`,
      `DELETE /gemini/v1beta/${name}`,
    ]);
  });
});
