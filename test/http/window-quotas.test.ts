import { describe, expect, it } from "vitest";
import { principalOf } from "../../src/pipeline/principal.js";
import { memoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { keptLimits, passThroughLimits } from "../../src/window/kept-quota.js";
import { appUnderTest } from "../support/app-under-test.js";

// Issue 52, items 1 and 2: source indexes are capped per principal in number and size as evidence is, and in
// pass-through, where any credential is accepted and each is its own principal, all callers share one storage quota
// of results and source indexes together, so invented keys cannot multiply storage. Through app.request(), on Node
// and in workerd (test/http runs in both).

type Gateway = Awaited<ReturnType<typeof appUnderTest>>["app"];

function put(gateway: Gateway, path: string, body: unknown, key: string) {
  return gateway.request(`/promptgate/window/${path}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
}

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string; promptgate: { code: string } } };
  expect(body.error.promptgate.code).toBe(body.error.code);
  return { status: response.status, code: body.error.code, message: body.error.message };
}

/** Source ids of `length` characters each, `count` of them, distinct. */
function sourceIds(count: number, length: number, prefix = ""): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`.padEnd(length, "x"));
}

/** Keeps `count` results directly in the store, for principals of their own (as invented keys would make). */
async function fill(store: Store, count: number, now = Date.now()): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const record = {
      principal: `p${index}`,
      id: "E1",
      text: "{}",
      pageChars: 200,
      createdAt: now,
      expiresAt: now + 1e9,
    };
    await store.putEvidence(record);
  }
}

describe("source index quota per principal", () => {
  it("refuses the index past the count, until one is deleted or replaced, and only for that caller", async () => {
    const { app } = await appUnderTest({ PROMPTGATE_KEYS: "gk-a,gk-b" });
    for (let index = 0; index < keptLimits.source_index.count; index += 1) {
      expect((await put(app, `sources/S${index}`, { sources: ["D1"] }, "gk-a")).status).toBe(200);
    }
    const refused = await put(app, "sources/one-more", { sources: ["D1"] }, "gk-a");
    expect(await errorOf(refused)).toMatchObject({ status: 400, code: "SOURCE_INDEX_LIMIT" });
    // Replacing a kept index is no new one; another caller has its own quota.
    expect((await put(app, "sources/S0", { sources: ["D2"] }, "gk-a")).status).toBe(200);
    expect((await put(app, "sources/S0", { sources: ["D2"] }, "gk-b")).status).toBe(200);
    const deleted = await app.request("/promptgate/window/sources/S1", {
      method: "DELETE",
      headers: { authorization: "Bearer gk-a" },
    });
    expect(deleted.status).toBe(204);
    expect((await put(app, "sources/one-more", { sources: ["D1"] }, "gk-a")).status).toBe(200);
  });

  it("refuses the index past the characters of source ids in all, counted as kept (a JSON array)", async () => {
    const { app } = await appUnderTest({ PROMPTGATE_KEYS: "gk-a" });
    // Two of the largest indexes (10,000 ids of 200 characters: 2,030,001 as JSON) fit, a third does not.
    const largest = (prefix: string) => ({ sources: sourceIds(10_000, 200, prefix) });
    expect(JSON.stringify(largest("a").sources).length).toBe(2_030_001);
    expect((await put(app, "sources/big-1", largest("a"), "gk-a")).status).toBe(200);
    expect((await put(app, "sources/big-2", largest("b"), "gk-a")).status).toBe(200);
    const refused = await errorOf(await put(app, "sources/big-3", largest("c"), "gk-a"));
    expect(refused).toMatchObject({ status: 400, code: "SOURCE_INDEX_LIMIT" });
    expect(refused.message).toContain(`${keptLimits.source_index.chars} characters`);
    // Replacing one frees its old size: the same index again fits.
    expect((await put(app, "sources/big-2", largest("c"), "gk-a")).status).toBe(200);
  });

  it("counts puts running at once exactly: of five at once with room for two, two are kept", async () => {
    const store = memoryStore();
    // A store that answers a usage a little later, as one over a network does: checks and puts could interleave.
    const slow: Store = {
      ...store,
      sourceIndexUsage: async (...query) => {
        const usage = await store.sourceIndexUsage(...query);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return usage;
      },
    };
    const { app } = await appUnderTest({ PROMPTGATE_KEYS: "gk-a" }, slow);
    const principal = await principalOf(store, "gk-a");
    const now = Date.now();
    for (let index = 0; index < keptLimits.source_index.count - 2; index += 1) {
      await store.putSourceIndex({ principal, id: `S${index}`, sources: [], createdAt: now, expiresAt: now + 1e9 });
    }
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((index) => put(app, `sources/new-${index}`, { sources: ["D1"] }, "gk-a")),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 400, 400, 400]);
    expect((await store.sourceIndexUsage(principal, Date.now(), "")).count).toBe(keptLimits.source_index.count);
  });
});

describe("the storage pass-through callers share", () => {
  it("refuses a result or index past the shared count, whatever new key presents it, with a plain 400", async () => {
    const store = memoryStore();
    const { app } = await appUnderTest({}, store);
    await fill(store, passThroughLimits.count - 1);
    expect((await put(app, "evidence/E1", { rows: [1] }, "sk-invented-1")).status).toBe(200);
    for (const [path, body] of [
      ["evidence/E1", { rows: [1] }],
      ["sources/S1", { sources: ["D1"] }],
    ] as const) {
      const refused = await put(app, path, body, `sk-invented-${path}`);
      expect(refused.headers.get("x-should-retry")).toBe("false");
      expect(refused.headers.get("x-promptgate-ref")).toMatch(/^ref_/);
      const error = await errorOf(refused);
      expect(error).toMatchObject({ status: 400, code: "PASS_THROUGH_STORAGE_LIMIT" });
      expect(error.message).toContain(`${passThroughLimits.count} results and source indexes`);
    }
    // Replacing a kept result takes no new room; deleting one frees it for anyone.
    expect((await put(app, "evidence/E1", { rows: [2] }, "sk-invented-1")).status).toBe(200);
    const deleted = await app.request("/promptgate/window/evidence/E1", {
      method: "DELETE",
      headers: { authorization: "Bearer sk-invented-1" },
    });
    expect(deleted.status).toBe(204);
    expect((await put(app, "sources/S1", { sources: ["D1"] }, "sk-invented-2")).status).toBe(200);
  });

  it("refuses a result past the shared characters though its own caller keeps nothing", async () => {
    const store = memoryStore();
    const nearlyFull: Store = {
      ...store,
      windowUsage: async () => ({ count: 1, chars: passThroughLimits.chars - 10 }),
    };
    const { app } = await appUnderTest({}, nearlyFull);
    expect((await put(app, "evidence/E1", { a: 1 }, "sk-new")).status).toBe(200); // {"a":1}: 7 characters
    const refused = await put(app, "evidence/E2", { a: "1234" }, "sk-new");
    expect(await errorOf(refused)).toMatchObject({ status: 400, code: "PASS_THROUGH_STORAGE_LIMIT" });
  });

  it("is no quota under gateway keys, where each key has its own only", async () => {
    const store = memoryStore();
    const full: Store = { ...store, windowUsage: async () => ({ count: 1e9, chars: 1e12 }) };
    const { app } = await appUnderTest({ PROMPTGATE_KEYS: "gk-a" }, full);
    expect((await put(app, "evidence/E1", { rows: [1] }, "gk-a")).status).toBe(200);
    expect((await put(app, "sources/S1", { sources: ["D1"] }, "gk-a")).status).toBe(200);
  });
});
