import { ApiError, GoogleGenAI } from "@google/genai";
import { beforeEach, describe, expect, it } from "vitest";
import {
  createSimulatedProvider,
  type SimulatedProvider,
  simulatedOrigin,
} from "../../src/simulated/simulated-provider.js";

const start = Date.parse("2026-03-01T12:00:00.000Z");
let clockAt = start;
let sim: SimulatedProvider;

beforeEach(() => {
  clockAt = start;
  sim = createSimulatedProvider({ clock: () => new Date(clockAt) });
});

function call(method: string, path: string, body?: unknown): Promise<Response> {
  return sim.fetch(
    new Request(`${simulatedOrigin}/gemini${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? null : typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

const cacheBody = {
  model: "models/gemini-test",
  displayName: "case notes",
  systemInstruction: { parts: [{ text: "You are terse." }] },
  contents: [{ role: "user", parts: [{ text: "a".repeat(400) }] }],
};

async function createCache(body: unknown = cacheBody): Promise<Record<string, unknown>> {
  const response = await call("POST", "/v1beta/cachedContents", body);
  expect(response.status).toBe(200);
  return json(response);
}

function generate(body: unknown, model = "gemini-test"): Promise<Response> {
  return call("POST", `/v1beta/models/${model}:generateContent`, body);
}

describe("the simulated Gemini cachedContents API", () => {
  it("creates a cached content with a name, the model, times a default hour apart and a token count", async () => {
    const created = await createCache();
    expect(created).toEqual({
      name: expect.stringMatching(/^cachedContents\/[0-9a-f]{12}$/),
      model: "models/gemini-test",
      displayName: "case notes",
      createTime: "2026-03-01T12:00:00.000Z",
      updateTime: "2026-03-01T12:00:00.000Z",
      expireTime: "2026-03-01T13:00:00.000Z",
      usageMetadata: { totalTokenCount: Math.ceil(("You are terse.".length + 400) / 4) },
    });
  });

  it("names caches deterministically: a new provider given the same creates gives the same names", async () => {
    const first = [await createCache(), await createCache()].map((cache) => cache.name);
    sim = createSimulatedProvider({ clock: () => new Date(clockAt) });
    const second = [await createCache(), await createCache()].map((cache) => cache.name);
    expect(second).toEqual(first);
    expect(first[0]).not.toBe(first[1]);
  });

  it("takes the expiry from a ttl such as '300s' or '1.5s', or from an expireTime", async () => {
    expect((await createCache({ ...cacheBody, ttl: "300s" })).expireTime).toBe("2026-03-01T12:05:00.000Z");
    expect((await createCache({ ...cacheBody, ttl: "1.5s" })).expireTime).toBe("2026-03-01T12:00:01.500Z");
    const at = await createCache({ ...cacheBody, expireTime: "2026-03-02T00:00:00.123456Z" });
    expect(at.expireTime).toBe("2026-03-02T00:00:00.123Z");
  });

  it("reads the snake_case wire names system_instruction, display_name and expire_time", async () => {
    const created = await createCache({
      model: "gemini-test",
      display_name: "snake",
      system_instruction: { parts: [{ text: "abcd" }] },
      expire_time: "2026-03-01T12:30:00Z",
    });
    expect(created).toMatchObject({
      model: "models/gemini-test",
      displayName: "snake",
      expireTime: "2026-03-01T12:30:00.000Z",
      usageMetadata: { totalTokenCount: 1 },
    });
  });

  it.each([
    ["no model", { contents: [] }],
    ["an empty model", { model: "" }],
    ["contents that are not a list", { model: "m", contents: "text" }],
    ["a systemInstruction that is not a Content", { model: "m", systemInstruction: 4 }],
    ["a displayName of 129 characters", { model: "m", displayName: "d".repeat(129) }],
    ["both ttl and expireTime", { model: "m", ttl: "60s", expireTime: "2026-03-02T00:00:00Z" }],
    ["a ttl without its unit", { model: "m", ttl: "60" }],
    ["a ttl of zero", { model: "m", ttl: "0s" }],
    ["an expireTime in the past", { model: "m", expireTime: "2026-03-01T11:00:00Z" }],
    ["an expireTime that is no timestamp", { model: "m", expireTime: "tomorrow" }],
    ["a body that is no JSON", "{"],
  ])("refuses a create with %s as a native 400 INVALID_ARGUMENT", async (_what, body) => {
    const response = await call("POST", "/v1beta/cachedContents", body);
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({
      error: { code: 400, status: "INVALID_ARGUMENT", message: expect.any(String) },
    });
  });

  it("gets, lists, patches and deletes a cached content; afterwards it is a native 404", async () => {
    const created = await createCache();
    const name = String(created.name);
    expect(await json(await call("GET", `/v1beta/${name}`))).toEqual(created);
    expect(await json(await call("GET", "/v1beta/cachedContents"))).toEqual({ cachedContents: [created] });

    clockAt += 10_000;
    const patched = await json(await call("PATCH", `/v1beta/${name}?updateMask=ttl`, { ttl: "7200s" }));
    expect(patched).toEqual({
      ...created,
      updateTime: "2026-03-01T12:00:10.000Z",
      expireTime: "2026-03-01T14:00:10.000Z",
    });
    expect(await json(await call("GET", `/v1beta/${name}`))).toEqual(patched);

    const deleted = await call("DELETE", `/v1beta/${name}`);
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({});
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { ttl: "60s" }],
      ["DELETE", undefined],
    ] as const) {
      const response = await call(method, `/v1beta/${name}`, body);
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ error: { code: 404, status: "NOT_FOUND" } });
    }
    expect(await json(await call("GET", "/v1beta/cachedContents"))).toEqual({ cachedContents: [] });
  });

  it("refuses a patch that names no new expiry", async () => {
    const { name } = await createCache();
    const response = await call("PATCH", `/v1beta/${String(name)}`, { displayName: "renamed" });
    expect(response.status).toBe(400);
  });

  it("forgets a cached content once its expiry has passed", async () => {
    const { name } = await createCache({ ...cacheBody, ttl: "60s" });
    clockAt += 59_999;
    expect((await call("GET", `/v1beta/${String(name)}`)).status).toBe(200);
    clockAt += 1;
    expect((await call("GET", `/v1beta/${String(name)}`)).status).toBe(404);
    expect(await json(await call("GET", "/v1beta/cachedContents"))).toEqual({ cachedContents: [] });
  });

  it("lists in pages of pageSize, in creation order, with a nextPageToken", async () => {
    const names = [];
    for (let index = 0; index < 3; index++) names.push((await createCache()).name);
    const first = await json(await call("GET", "/v1beta/cachedContents?pageSize=2"));
    expect((first.cachedContents as { name: string }[]).map((cache) => cache.name)).toEqual(names.slice(0, 2));
    expect(first.nextPageToken).toEqual(expect.any(String));
    const second = await json(
      await call("GET", `/v1beta/cachedContents?pageSize=2&pageToken=${String(first.nextPageToken)}`),
    );
    expect((second.cachedContents as { name: string }[]).map((cache) => cache.name)).toEqual(names.slice(2));
    expect(second.nextPageToken).toBeUndefined();
  });

  it("keeps the caches of one simulated provider apart from another's", async () => {
    const { name } = await createCache();
    const other = createSimulatedProvider();
    const response = await other.fetch(new Request(`${simulatedOrigin}/gemini/v1beta/${String(name)}`));
    expect(response.status).toBe(404);
  });
});

describe("generateContent with a simulated cachedContent", () => {
  const contents = [{ role: "user", parts: [{ text: "What now?" }] }];

  it("answers a request naming a known cache and counts the cached tokens in its prompt", async () => {
    const created = await createCache();
    const cachedTokens = (created.usageMetadata as { totalTokenCount: number }).totalTokenCount;
    const response = await generate({ contents, cachedContent: created.name });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.usageMetadata).toMatchObject({
      cachedContentTokenCount: cachedTokens,
      promptTokenCount: cachedTokens + Math.ceil("What now?".length / 4),
    });
  });

  it("answers a request that names the cache in the snake_case cached_content", async () => {
    const { name } = await createCache();
    expect((await generate({ contents, cached_content: name })).status).toBe(200);
  });

  it("refuses an unknown cache with a native 404", async () => {
    const response = await generate({ contents, cachedContent: "cachedContents/doesnotexist" });
    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({
      error: { code: 404, status: "NOT_FOUND", message: "CachedContent not found (or permission denied)" },
    });
  });

  it("refuses an expired or deleted cache with a native 404", async () => {
    const expiring = await createCache({ ...cacheBody, ttl: "1s" });
    const deleted = await createCache();
    await call("DELETE", `/v1beta/${String(deleted.name)}`);
    clockAt += 1_000;
    expect((await generate({ contents, cachedContent: expiring.name })).status).toBe(404);
    expect((await generate({ contents, cachedContent: deleted.name })).status).toBe(404);
  });

  it("refuses a cache name that is not cachedContents/{id} with a native 400", async () => {
    const response = await generate({ contents, cachedContent: "caches/x" });
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ error: { status: "INVALID_ARGUMENT" } });
  });

  it.each([
    ["systemInstruction", { parts: [{ text: "s" }] }],
    ["tools", []],
    ["toolConfig", {}],
  ])("refuses a cache beside %s with Gemini's native 400", async (field, value) => {
    const { name } = await createCache();
    const response = await generate({ contents, cachedContent: name, [field]: value });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({
      error: {
        code: 400,
        status: "INVALID_ARGUMENT",
        message:
          "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.",
      },
    });
  });

  it("refuses a cache created for another model with a native 400", async () => {
    const { name } = await createCache();
    const response = await generate({ contents, cachedContent: name }, "gemini-other");
    expect(response.status).toBe(400);
  });

  it("streams an answer for a known cache as well", async () => {
    const { name } = await createCache();
    const response = await call("POST", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", {
      contents,
      cachedContent: name,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("What now?");
  });
});

describe("the @google/genai SDK against the simulated caches", () => {
  const client = () =>
    new GoogleGenAI({
      apiKey: "x",
      httpOptions: {
        baseUrl: `${simulatedOrigin}/gemini`,
        fetch: (url: string | URL | Request, init?: RequestInit) => sim.fetch(new Request(url, init)),
      },
    });

  it("creates, gets, updates, lists, uses and deletes a cache", async () => {
    const ai = client();
    const cache = await ai.caches.create({
      model: "gemini-test",
      config: { systemInstruction: "Be brief.", contents: "Remember this.", ttl: "600s" },
    });
    expect(cache.name).toMatch(/^cachedContents\//);
    expect(cache.expireTime).toBe("2026-03-01T12:10:00.000Z");
    expect((await ai.caches.get({ name: cache.name ?? "" })).usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    const updated = await ai.caches.update({ name: cache.name ?? "", config: { ttl: "60s" } });
    expect(updated.expireTime).toBe("2026-03-01T12:01:00.000Z");
    const listed = [];
    for await (const item of await ai.caches.list()) listed.push(item.name);
    expect(listed).toEqual([cache.name]);
    const answer = await ai.models.generateContent({
      model: "gemini-test",
      contents: "And now?",
      config: { cachedContent: cache.name },
    });
    expect(answer.text).toContain("And now?");
    expect(answer.usageMetadata?.cachedContentTokenCount).toBe(cache.usageMetadata?.totalTokenCount);
    await ai.caches.delete({ name: cache.name ?? "" });
    const error = await ai.caches.get({ name: cache.name ?? "" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
  });
});
