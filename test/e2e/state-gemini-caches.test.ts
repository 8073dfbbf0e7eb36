import { ApiError, type CachedContent, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies, estimatingPolicy } from "../support/temp-state.js";

/** One round trip as the SDK made it: what it sent and the headers it got back. */
interface Exchange {
  method: string;
  url: string;
  status: number;
  headers: Headers;
}

let harness: GatewayUnderTest;
let exchanges: Exchange[];

const charsPerToken = 4.5;

beforeAll(async () => {
  const policies = copyPolicies({
    "investigation.estimate.toml": estimatingPolicy("investigation.estimate", charsPerToken),
  });
  harness = await startGatewayUnderTest({ PROMPTGATE_POLICIES: policies });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.upstream.received.length = 0;
  harness.upstream.answerWith(undefined);
  exchanges = [];
});

/** A stock client whose base URL pins `policy`; its fetch hook keeps each answer's headers. */
function clientFor(policy: string): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: "client-key",
    httpOptions: {
      baseUrl: `${harness.gateway.url}/policies/${policy}/gemini`,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        exchanges.push({
          method: init?.method ?? "GET",
          url: String(input),
          status: response.status,
          headers: response.headers,
        });
        return response;
      },
    },
  });
}

const bounded = () => clientFor("investigation.bounded");

/** The preflight prompt_size the gateway reported for the last round trip. */
function lastSize(): Record<string, unknown> {
  return JSON.parse(exchanges.at(-1)?.headers.get("x-promptgate-prompt-size") ?? "null");
}

/** The gateway's error body inside an ApiError (@google/genai keeps the JSON body as the message). */
function errorOf(caught: unknown): { status: number; reason: string | undefined; promptgate: Record<string, unknown> } {
  expect(caught).toBeInstanceOf(ApiError);
  const error = caught as ApiError;
  const body = JSON.parse(error.message) as {
    error: { details?: { reason: string }[]; promptgate: Record<string, unknown> };
  };
  return { status: error.status, reason: body.error.details?.[0]?.reason, promptgate: body.error.promptgate };
}

/** Creates a cache of `systemChars` + `contentChars` characters; returns it and the create's preflight. */
async function createCache(
  ai: GoogleGenAI,
  systemChars: number,
  contentChars: number,
  ttl?: string,
): Promise<{ cache: CachedContent & { name: string }; size: Record<string, unknown> }> {
  const cache = await ai.caches.create({
    model: "gemini-test",
    config: {
      systemInstruction: "s".repeat(systemChars),
      contents: "c".repeat(contentChars),
      ...(ttl === undefined ? {} : { ttl }),
    },
  });
  expect(cache.name).toMatch(/^cachedContents\//);
  return { cache: { ...cache, name: cache.name ?? "" }, size: lastSize() };
}

const upstreamPaths = () => harness.upstream.received.map((request) => `${request.method} ${request.url}`);

describe("Gemini cached contents through the gateway, with the @google/genai SDK", () => {
  it("measures a create as the characters of its system instruction and contents", async () => {
    const { size } = await createCache(bounded(), 1_000, 9_000);
    expect(size).toMatchObject({ system_chars: 1_000, message_chars: 9_000, total_chars: 10_000 });
    expect(upstreamPaths()).toEqual(["POST /gemini/v1beta/cachedContents"]);
  });

  it("counts the cache's recorded characters in a generateContent that lands exactly on the limit", async () => {
    const ai = bounded();
    const { cache, size: created } = await createCache(ai, 1_000, 9_000);
    const result = await ai.models.generateContent({
      model: "gemini-test",
      contents: "x".repeat(8_500),
      config: { cachedContent: cache.name },
    });
    expect(result.text).toContain("xxx");
    expect(lastSize()).toMatchObject({
      check: "preflight",
      cache_prefix_chars: created.total_chars,
      message_chars: 8_500,
      system_chars: 0,
      total_chars: 18_500,
      reserve_chars: 1_500,
      conservative_total_chars: 20_000,
      limit_chars: 20_000,
    });
    expect(lastSize()).not.toHaveProperty("cache_prefix_estimated");
    const sent = harness.upstream.received.at(-1);
    expect(sent?.url).toBe("/gemini/v1beta/models/gemini-test:generateContent");
    expect(JSON.parse(sent?.body ?? "{}")).toMatchObject({ cachedContent: cache.name });
  });

  it("rejects a generateContent one character over the limit because of its cache, sending nothing", async () => {
    const ai = bounded();
    const { cache } = await createCache(ai, 1_000, 9_000);
    harness.upstream.received.length = 0;
    const caught = await ai.models
      .generateContent({ model: "gemini-test", contents: "x".repeat(8_501), config: { cachedContent: cache.name } })
      .catch((error: unknown) => error);
    const error = errorOf(caught);
    expect(error.status).toBe(400);
    expect(error.reason).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(error.promptgate).toMatchObject({
      code: "INVESTIGATION_PROMPT_LIMIT",
      prompt_size: { cache_prefix_chars: 10_000, message_chars: 8_501, conservative_total_chars: 20_001 },
    });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("rejects a create whose content alone exceeds the limit with INVESTIGATION_PROMPT_LIMIT, sending nothing", async () => {
    const caught = await createCache(bounded(), 1, 20_000).catch((error: unknown) => error);
    const error = errorOf(caught);
    expect(error.status).toBe(400);
    expect(error.reason).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(error.promptgate).toMatchObject({ prompt_size: { total_chars: 20_001, limit_chars: 20_000 } });
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("accepts a create of exactly the limit, as its content alone does not exceed it", async () => {
    const { size } = await createCache(bounded(), 0, 20_000);
    expect(size).toMatchObject({ total_chars: 20_000 });
    expect(harness.upstream.received).toHaveLength(1);
  });

  it("forgets a deleted cache: a generateContent naming it gets CACHE_PREFIX_UNKNOWN under reject, sending nothing", async () => {
    const ai = bounded();
    const { cache } = await createCache(ai, 10, 10);
    await ai.caches.delete({ name: cache.name });
    expect(upstreamPaths().at(-1)).toBe(`DELETE /gemini/v1beta/${cache.name}`);
    harness.upstream.received.length = 0;
    const caught = await ai.models
      .generateContent({ model: "gemini-test", contents: "hello", config: { cachedContent: cache.name } })
      .catch((error: unknown) => error);
    const error = errorOf(caught);
    expect(error.status).toBe(400);
    expect(error.reason).toBe("CACHE_PREFIX_UNKNOWN");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("passes caches.get and caches.list through to the provider", async () => {
    const ai = bounded();
    const { cache } = await createCache(ai, 10, 10);
    const fetched = await ai.caches.get({ name: cache.name });
    expect(fetched).toMatchObject({ name: cache.name, usageMetadata: cache.usageMetadata });
    const listed: string[] = [];
    for await (const item of await ai.caches.list()) listed.push(item.name ?? "");
    expect(listed).toContain(cache.name);
    expect(upstreamPaths().slice(1)).toEqual([`GET /gemini/v1beta/${cache.name}`, "GET /gemini/v1beta/cachedContents"]);
  });

  // upstream body for every `proxy` endpoint), so the PATCH reaches the provider empty, Gemini refuses it,
  // and the new expiry is never recorded. Fix: read the capped body for proxied methods that carry one
  // (POST, PUT, PATCH) and forward it unchanged.
  it("passes caches.update through and keeps counting the cache for as long as the new ttl says", async () => {
    const ai = bounded();
    const { cache } = await createCache(ai, 100, 200, "1s");
    const updated = await ai.caches.update({ name: cache.name, config: { ttl: "3600s" } });
    const patch = harness.upstream.received.at(-1);
    expect(`${patch?.method} ${patch?.url}`).toBe(`PATCH /gemini/v1beta/${cache.name}`);
    expect(JSON.parse(patch?.body ?? "{}")).toEqual({ ttl: "3600s" });
    expect(Date.parse(updated.expireTime ?? "")).toBeGreaterThan(Date.parse(cache.expireTime ?? "") + 3_000_000);
    // Past the original one-second ttl, the cache still counts: the gateway took the new expiry.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await ai.models.generateContent({ model: "gemini-test", contents: "again", config: { cachedContent: cache.name } });
    expect(lastSize()).toMatchObject({ cache_prefix_chars: 300, message_chars: 5, total_chars: 305 });
  });

  it("stops counting a cache once its ttl has passed, and refuses it under reject", async () => {
    const ai = bounded();
    const { cache } = await createCache(ai, 10, 10, "1s");
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    harness.upstream.received.length = 0;
    const caught = await ai.models
      .generateContent({ model: "gemini-test", contents: "late", config: { cachedContent: cache.name } })
      .catch((error: unknown) => error);
    expect(errorOf(caught).reason).toBe("CACHE_PREFIX_UNKNOWN");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("estimates a cache the gateway never saw from the provider's totalTokenCount under estimate, flagging it", async () => {
    // Created at the provider directly, so the gateway holds no record of it.
    const direct = await fetch(`${harness.upstream.origin}/gemini/v1beta/cachedContents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "models/gemini-test",
        contents: [{ role: "user", parts: [{ text: "p".repeat(4_001) }] }],
      }),
    });
    const created = (await direct.json()) as { name: string; usageMetadata: { totalTokenCount: number } };
    const tokens = created.usageMetadata.totalTokenCount;
    expect(tokens).toBe(1_001);
    harness.upstream.received.length = 0;

    const ai = clientFor("investigation.estimate");
    await ai.models.generateContent({
      model: "gemini-test",
      contents: "hello",
      config: { cachedContent: created.name },
    });
    expect(lastSize()).toMatchObject({
      cache_prefix_chars: Math.ceil(tokens * charsPerToken),
      cache_prefix_estimated: true,
      message_chars: 5,
      total_chars: Math.ceil(tokens * charsPerToken) + 5,
    });
    expect(upstreamPaths()).toEqual([
      `GET /gemini/v1beta/${created.name}`,
      "POST /gemini/v1beta/models/gemini-test:generateContent",
    ]);
  });

  it("refuses a cache neither the gateway nor the provider knows with CACHE_PREFIX_UNKNOWN under estimate", async () => {
    const ai = clientFor("investigation.estimate");
    const caught = await ai.models
      .generateContent({
        model: "gemini-test",
        contents: "hi",
        config: { cachedContent: "cachedContents/nosuchcache" },
      })
      .catch((error: unknown) => error);
    expect(errorOf(caught).reason).toBe("CACHE_PREFIX_UNKNOWN");
    expect(upstreamPaths()).toEqual(["GET /gemini/v1beta/cachedContents/nosuchcache"]);
  });

  it("counts a cache created through the gateway exactly, not estimated, under estimate", async () => {
    const ai = clientFor("investigation.estimate");
    const { cache } = await createCache(ai, 40, 60);
    harness.upstream.received.length = 0;
    await ai.models.generateContent({ model: "gemini-test", contents: "hi", config: { cachedContent: cache.name } });
    expect(lastSize()).toMatchObject({ cache_prefix_chars: 100 });
    expect(lastSize()).not.toHaveProperty("cache_prefix_estimated");
    expect(upstreamPaths()).toEqual(["POST /gemini/v1beta/models/gemini-test:generateContent"]);
  });

  it("refuses cachedContent beside systemInstruction with INVALID_REQUEST, sending nothing", async () => {
    const ai = bounded();
    const { cache } = await createCache(ai, 10, 10);
    harness.upstream.received.length = 0;
    const caught = await ai.models
      .generateContent({
        model: "gemini-test",
        contents: "hi",
        config: { cachedContent: cache.name, systemInstruction: "Be brief." },
      })
      .catch((error: unknown) => error);
    const error = errorOf(caught);
    expect(error.status).toBe(400);
    expect(error.reason).toBe("INVALID_REQUEST");
    expect(harness.upstream.received).toHaveLength(0);
  });

  it("counts a response schema once when the cache embeds it as JSON text", async () => {
    const schema = {
      type: "object",
      properties: { verdict: { type: "string", enum: ["supported", "refuted"] }, reason: { type: "string" } },
      required: ["verdict", "reason"],
    };
    const ai = bounded();
    const cache = await ai.caches.create({
      model: "gemini-test",
      config: {
        systemInstruction: "Answer only with JSON.",
        contents: `Your answer must match this JSON Schema:\n${JSON.stringify(schema, null, 2)}\nThe case file follows.`,
      },
    });
    const cachedChars = lastSize().total_chars as number;
    const result = await ai.models.generateContent({
      model: "gemini-test",
      contents: "Decide.",
      config: { cachedContent: cache.name, responseMimeType: "application/json", responseJsonSchema: schema },
    });
    expect(JSON.parse(result.text ?? "")).toHaveProperty("verdict");
    expect(lastSize()).toMatchObject({
      schema_deduplicated: true,
      schema_chars: 0,
      cache_prefix_chars: cachedChars,
      total_chars: cachedChars + "Decide.".length,
    });
  });

  it("counts a response schema the cache does not embed in full", async () => {
    const schema = { type: "object", properties: { other: { type: "string" } }, required: ["other"] };
    const ai = bounded();
    const cache = await ai.caches.create({
      model: "gemini-test",
      config: { contents: 'An unrelated object: {"type": "object"}' },
    });
    await ai.models.generateContent({
      model: "gemini-test",
      contents: "Decide.",
      config: { cachedContent: cache.name, responseMimeType: "application/json", responseJsonSchema: schema },
    });
    expect(lastSize()).toMatchObject({ schema_deduplicated: false, schema_chars: JSON.stringify(schema).length });
  });
});
