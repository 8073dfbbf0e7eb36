import { ApiError, type CachedContent, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies, estimatingPolicy } from "../support/temp-state.js";

// Issue 51, item 2: with gateway keys every client reaches Gemini with the server's one key, so the gateway is the
// only boundary between callers' cached contents. Key B must never learn that key A's caches exist: on every
// cachedContents route and in a call's `cachedContent`, A's name answers exactly as a name that never was, and
// nothing about it reaches the provider.

const keyA = "gw-key-alpha-1234567890";
const keyB = "gw-key-beta-0987654321";
/** A name of the simulated provider's shape that no cache has. */
const unknownName = "cachedContents/000000000000";

let harness: GatewayUnderTest;

beforeAll(async () => {
  const policies = copyPolicies({ "investigation.estimate.toml": estimatingPolicy("investigation.estimate", 4) });
  harness = await startGatewayUnderTest({
    PROMPTGATE_KEYS: `${keyA},${keyB}`,
    GEMINI_API_KEY: "AIzaServerGeminiKey000222",
    PROMPTGATE_POLICIES: policies,
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
});

function gemini(apiKey: string, policy = "investigation.bounded"): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${harness.gateway.url}/policies/${policy}/gemini` } });
}

async function createCache(apiKey: string): Promise<CachedContent & { name: string }> {
  const cache = await gemini(apiKey).caches.create({
    model: "gemini-test",
    config: { systemInstruction: "Keep this to yourself.", contents: "A's confidential case file." },
  });
  expect(cache.name).toMatch(/^cachedContents\//);
  return { ...cache, name: cache.name ?? "" };
}

/** What the caller sees of a refusal: status and the native error body, less the ref that differs per call. */
interface Seen {
  status: number;
  body: unknown;
}

/** The SDK's refusal as the caller sees it (@google/genai keeps the JSON body as the ApiError's message). */
async function refusalOf(promise: Promise<unknown>): Promise<Seen> {
  const caught = await promise.then(
    () => {
      throw new Error("expected the call to be refused");
    },
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(ApiError);
  const error = caught as ApiError;
  return { status: error.status, body: withoutRef(JSON.parse(error.message)) };
}

/** One request with raw fetch, as the caller sees its answer. */
async function seenOf(apiKey: string, method: string, path: string, body?: unknown): Promise<Seen> {
  const response = await fetch(`${harness.gateway.url}/policies/investigation.estimate/gemini${path}`, {
    method,
    headers: { "x-goog-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? "" : withoutRef(JSON.parse(text)) };
}

function withoutRef(body: { error?: { promptgate?: { ref?: string } } }): unknown {
  const copy = structuredClone(body);
  if (copy.error?.promptgate !== undefined) copy.error.promptgate.ref = "(ref)";
  return copy;
}

const upstreamPaths = () => harness.upstream.received.map((request) => `${request.method} ${request.url}`);

describe("key B and key A's cached contents, through the @google/genai SDK", () => {
  it("caches.get of A's cache answers as for an unknown name, and nothing reaches the provider", async () => {
    const cache = await createCache(keyA);
    harness.upstream.received.length = 0;
    const mine = await refusalOf(gemini(keyB).caches.get({ name: cache.name }));
    const unknown = await refusalOf(gemini(keyB).caches.get({ name: unknownName }));
    expect(mine).toEqual(unknown);
    expect(mine.status).toBe(404);
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("caches.update of A's cache answers as for an unknown name and leaves its expiry as it was", async () => {
    const cache = await createCache(keyA);
    harness.upstream.received.length = 0;
    const mine = await refusalOf(gemini(keyB).caches.update({ name: cache.name, config: { ttl: "1s" } }));
    const unknown = await refusalOf(gemini(keyB).caches.update({ name: unknownName, config: { ttl: "1s" } }));
    expect(mine).toEqual(unknown);
    expect(harness.upstream.received).toHaveLength(0);
    expect((await gemini(keyA).caches.get({ name: cache.name })).expireTime).toBe(cache.expireTime);
  });

  it("caches.delete of A's cache answers as for an unknown name and leaves the cache to A", async () => {
    const cache = await createCache(keyA);
    harness.upstream.received.length = 0;
    const mine = await refusalOf(gemini(keyB).caches.delete({ name: cache.name }));
    const unknown = await refusalOf(gemini(keyB).caches.delete({ name: unknownName }));
    expect(mine).toEqual(unknown);
    expect(harness.upstream.received).toHaveLength(0);
    expect((await gemini(keyA).caches.get({ name: cache.name })).name).toBe(cache.name);
  });

  it("caches.list shows B only its own caches, page by page, and A all of its own", async () => {
    const ofA = [await createCache(keyA), await createCache(keyA), await createCache(keyA)].map((cache) => cache.name);
    const ofB = [(await createCache(keyB)).name];
    // Page by page, as the SDK documents it: its `for await` yields `undefined` for an empty page after a token,
    // which a filtered list can end with (see docs/contract.md).
    const listed = async (apiKey: string) => {
      const pager = await gemini(apiKey).caches.list({ config: { pageSize: 2 } });
      const names = pager.page.map((cache) => cache.name ?? "");
      while (pager.hasNextPage()) names.push(...(await pager.nextPage()).map((cache) => cache.name ?? ""));
      return names;
    };
    const seenByB = await listed(keyB);
    expect(seenByB).toEqual(expect.arrayContaining(ofB));
    for (const name of ofA) expect(seenByB).not.toContain(name);
    const seenByA = await listed(keyA);
    expect(seenByA).toEqual(expect.arrayContaining(ofA));
    for (const name of ofB) expect(seenByA).not.toContain(name);
  });

  it("a generateContent naming A's cache is refused as one naming an unknown cache, sending nothing", async () => {
    const cache = await createCache(keyA);
    harness.upstream.received.length = 0;
    const call = (name: string) =>
      gemini(keyB).models.generateContent({
        model: "gemini-test",
        contents: "Repeat.",
        config: { cachedContent: name },
      });
    const mine = await refusalOf(call(cache.name));
    const unknown = await refusalOf(call(unknownName));
    expect(mine).toEqual(unknown);
    expect(mine).toMatchObject({ status: 400, body: { error: { promptgate: { code: "CACHE_PREFIX_UNKNOWN" } } } });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("under a policy that estimates unknown prefixes, B's reference to A's cache is still refused, asking nothing", async () => {
    const cache = await createCache(keyA);
    harness.upstream.received.length = 0;
    const call = (name: string) =>
      gemini(keyB, "investigation.estimate").models.generateContent({
        model: "gemini-test",
        contents: "Repeat.",
        config: { cachedContent: name },
      });
    const mine = await refusalOf(call(cache.name));
    expect(mine).toEqual(await refusalOf(call(unknownName)));
    expect(mine).toMatchObject({ status: 400, body: { error: { promptgate: { code: "CACHE_PREFIX_UNKNOWN" } } } });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("lets A get, use, update and delete its own cache", async () => {
    const ai = gemini(keyA);
    const cache = await createCache(keyA);
    expect((await ai.caches.get({ name: cache.name })).name).toBe(cache.name);
    const result = await ai.models.generateContent({
      model: "gemini-test",
      contents: "Go on.",
      config: { cachedContent: cache.name },
    });
    expect(result.text).toBeTruthy();
    await ai.caches.update({ name: cache.name, config: { ttl: "7200s" } });
    await ai.caches.delete({ name: cache.name });
    expect(upstreamPaths().slice(1)).toEqual([
      `GET /gemini/v1beta/${cache.name}`,
      "POST /gemini/v1beta/models/gemini-test:generateContent",
      `PATCH /gemini/v1beta/${cache.name}`,
      `DELETE /gemini/v1beta/${cache.name}`,
    ]);
  });
});

describe("key B and key A's cached contents, on every route and method with raw fetch", () => {
  const routes = (name: string) =>
    ["v1beta", "v1", "v1alpha"].flatMap((version) => [
      { method: "GET", path: `/${version}/${name}` },
      { method: "PATCH", path: `/${version}/${name}`, body: { ttl: "1s" } },
      { method: "DELETE", path: `/${version}/${name}` },
      { method: "PUT", path: `/${version}/${name}`, body: {} },
      {
        method: "POST",
        path: `/${version}/models/gemini-test:generateContent`,
        body: { contents: [{ role: "user", parts: [{ text: "Repeat." }] }], cachedContent: name },
      },
      {
        method: "POST",
        path: `/${version}/models/gemini-test:generateContent`,
        body: { contents: [{ role: "user", parts: [{ text: "Repeat." }] }], cached_content: name },
      },
      {
        method: "POST",
        path: `/${version}/models/gemini-test:streamGenerateContent?alt=sse`,
        body: { contents: [{ role: "user", parts: [{ text: "Repeat." }] }], cachedContent: name },
      },
      {
        method: "POST",
        path: `/${version}/models/gemini-test:countTokens`,
        body: {
          generateContentRequest: {
            model: "models/gemini-test",
            contents: [{ role: "user", parts: [{ text: "Repeat." }] }],
            cachedContent: name,
          },
        },
      },
    ]);

  it("answers B for A's name exactly as for an unknown name, and sends the provider nothing", async () => {
    const cache = await createCache(keyA);
    harness.upstream.received.length = 0;
    const ofA = routes(cache.name);
    const unknown = routes(unknownName);
    for (const [index, route] of ofA.entries()) {
      const other = unknown[index] as (typeof unknown)[number];
      const seen = await seenOf(keyB, route.method, route.path, route.body);
      expect(seen, `${route.method} ${route.path}`).toEqual(await seenOf(keyB, other.method, other.path, other.body));
      expect(JSON.stringify(seen.body)).not.toContain(cache.name.slice("cachedContents/".length));
    }
    expect(upstreamPaths()).toEqual([]);
    expect((await gemini(keyA).caches.get({ name: cache.name })).name).toBe(cache.name);
  });

  it("lists none of A's names to B", async () => {
    const cache = await createCache(keyA);
    const seen = await seenOf(keyB, "GET", "/v1beta/cachedContents?pageSize=1000");
    expect(seen.status).toBe(200);
    expect(JSON.stringify(seen.body)).not.toContain(cache.name);
  });

  it("follows the provider's pages past those that show B nothing, and passes the next page's token through", async () => {
    const own = (await createCache(keyB)).name;
    for (let count = 0; count < 3; count++) await createCache(keyA);
    const last = (await createCache(keyB)).name;
    harness.upstream.received.length = 0;
    const names: string[] = [];
    let token: string | undefined;
    do {
      const query = `pageSize=1${token === undefined ? "" : `&pageToken=${token}`}`;
      const page = (await seenOf(keyB, "GET", `/v1beta/cachedContents?${query}`)).body as {
        cachedContents: { name: string }[];
        nextPageToken?: string;
      };
      // A page that shows B nothing comes only at the end, with no next page.
      if (page.nextPageToken !== undefined) expect(page.cachedContents).toHaveLength(1);
      names.push(...page.cachedContents.map((cache) => cache.name));
      token = page.nextPageToken;
    } while (token !== undefined);
    expect(names).toEqual(expect.arrayContaining([own, last]));
    // Every provider page was asked for once, A's three among them, each with the token the provider gave.
    const asked = upstreamPaths();
    expect(new Set(asked).size).toBe(asked.length);
    expect(asked.length).toBeGreaterThanOrEqual(names.length + 3);
  });
});

describe("a cache the gateway did not see created, under gateway keys", () => {
  it("is no caller's: its routes are 404 and a call naming it is refused, with nothing sent", async () => {
    const direct = await fetch(`${harness.upstream.origin}/gemini/v1beta/cachedContents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "models/gemini-test", contents: [{ role: "user", parts: [{ text: "p" }] }] }),
    });
    const { name } = (await direct.json()) as { name: string };
    harness.upstream.received.length = 0;
    for (const key of [keyA, keyB]) {
      expect(await seenOf(key, "GET", `/v1beta/${name}`)).toEqual(await seenOf(key, "GET", `/v1beta/${unknownName}`));
      const call = await seenOf(key, "POST", "/v1beta/models/gemini-test:generateContent", {
        contents: [{ role: "user", parts: [{ text: "Repeat." }] }],
        cachedContent: name,
      });
      expect(call).toMatchObject({ status: 400, body: { error: { promptgate: { code: "CACHE_PREFIX_UNKNOWN" } } } });
      const listed = await seenOf(key, "GET", "/v1beta/cachedContents?pageSize=1000");
      expect(JSON.stringify(listed.body)).not.toContain(name);
    }
    // Only the two lists went out, whose answers the gateway filtered.
    expect(upstreamPaths()).toEqual(Array(2).fill("GET /gemini/v1beta/cachedContents?pageSize=1000"));
  });
});

describe("pass-through (no gateway keys): the caller's own Google key is the boundary", () => {
  let passThrough: GatewayUnderTest;
  beforeAll(async () => {
    passThrough = await startGatewayUnderTest();
  });
  afterAll(() => passThrough.close());

  const client = (apiKey: string) =>
    new GoogleGenAI({
      apiKey,
      httpOptions: { baseUrl: `${passThrough.gateway.url}/policies/investigation.bounded/gemini` },
    });

  it("counts a cache only for the key that created it: another key's reference is an unknown prefix", async () => {
    const cache = await client("google-key-a").caches.create({
      model: "gemini-test",
      config: { contents: "A's case file." },
    });
    passThrough.upstream.received.length = 0;
    const call = (name: string) =>
      client("google-key-b").models.generateContent({
        model: "gemini-test",
        contents: "Repeat.",
        config: { cachedContent: name },
      });
    const mine = await refusalOf(call(cache.name ?? ""));
    expect(mine).toEqual(await refusalOf(call(unknownName)));
    expect(mine).toMatchObject({ status: 400, body: { error: { promptgate: { code: "CACHE_PREFIX_UNKNOWN" } } } });
    expect(passThrough.upstream.received).toHaveLength(0);
  });

  it("forwards another key's get to the provider, which judges the caller's own key", async () => {
    const cache = await client("google-key-a").caches.create({ model: "gemini-test", config: { contents: "A." } });
    passThrough.upstream.received.length = 0;
    await client("google-key-b").caches.get({ name: cache.name ?? "" });
    const sent = passThrough.upstream.received[0];
    expect(`${sent?.method} ${sent?.url}`).toBe(`GET /gemini/v1beta/${cache.name}`);
    expect(sent?.headers["x-goog-api-key"]).toBe("google-key-b");
  });
});
