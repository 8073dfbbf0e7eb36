import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { principalOf } from "../../src/pipeline/principal.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { contextRequestLimits } from "../../src/window/context-builder.js";
import { fragmentAnswerLimits, maxPageChars, minPageChars } from "../../src/window/fragment.js";
import { signatureLimits } from "../../src/window/signature.js";
import { appUnderTest } from "../support/app-under-test.js";

// Issue 51, items 4 to 6, through app.request(): each reproduction is refused with a 400 naming the limit, or
// answered at the cost of what it answers. Runs on Node and in workerd (test/http is shared). The times asserted
// are loose (a shared machine); the figures measured are in the commit messages.

type Gateway = Awaited<ReturnType<typeof appUnderTest>>["app"];

async function app(): Promise<Gateway> {
  return (await appUnderTest({ PROMPTGATE_MAX_BODY_BYTES: String(32 * 1024 * 1024) })).app;
}

function post(gateway: Gateway, path: string, body: unknown, headers: Record<string, string> = {}) {
  return gateway.request(`/promptgate/window/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

function putEvidence(gateway: Gateway, id: string, value: unknown, pageChars?: number) {
  const query = pageChars === undefined ? "" : `?page_chars=${pageChars}`;
  return gateway.request(`/promptgate/window/evidence/${id}${query}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: "Bearer sk-alice" },
    body: JSON.stringify(value),
  });
}

function recall(gateway: Gateway, id: string, page: number) {
  return post(gateway, "recall", { kind: "recall", evidence_refs: [id], page }, { authorization: "Bearer sk-alice" });
}

/** A refusal's code and message (the message names the member refused; the plain shape has no `param`). */
async function refusal(response: Response): Promise<{ code: string; message: string }> {
  expect(response.status).toBe(400);
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

async function timed<T>(run: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

describe("POST /promptgate/window/signature bounds (item 4)", () => {
  it("refuses the reported schema, 1.2 KB of anyOf through $ref, with 400 INVALID_REQUEST naming the size", async () => {
    const defs: Record<string, unknown> = {};
    for (let level = 0; level < 12; level++) {
      defs[`d${level}`] =
        level === 11 ? { type: "string" } : { anyOf: Array(4).fill({ $ref: `#/$defs/d${level + 1}` }) };
    }
    const gateway = await app();
    const { value: response, ms } = await timed(() =>
      post(gateway, "signature", { schema: { $defs: defs, $ref: "#/$defs/d0" } }),
    );
    const error = await refusal(response);
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message).toContain(`${signatureLimits.maxChars} characters`);
    expect(ms).toBeLessThan(2_000);
  });

  it("refuses a schema nested past the depth limit, naming the depth", async () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let level = 0; level <= signatureLimits.maxDepth; level++) schema = { type: "array", items: schema };
    const error = await refusal(await post(await app(), "signature", { schema }));
    expect(error.message).toContain(`${signatureLimits.maxDepth} levels`);
  });
});

describe("pages: fragment, evidence and recall bounds (item 5)", () => {
  it("refuses page_chars under the minimum on fragment and evidence, before any page is cut", async () => {
    const gateway = await app();
    const megabyte = "x".repeat(1_000_000);
    for (const response of [
      await post(gateway, "fragment", { value: megabyte, page_chars: 1 }),
      await post(gateway, "fragment", { value: megabyte, page_chars: minPageChars - 1 }),
      await putEvidence(gateway, "E1", { value: megabyte }, 1),
    ]) {
      const error = await refusal(response);
      expect(error.code).toBe("INVALID_REQUEST");
      expect(error.message).toContain(`'page_chars' must be a whole number from ${minPageChars}`);
    }
  });

  it("refuses a fragment answer of more pages than the cap, and one of more characters", async () => {
    const gateway = await app();
    const pages = await refusal(await post(gateway, "fragment", { value: "x".repeat(1_000_000), page_chars: 200 }));
    expect(pages.message).toContain("'page_chars'");
    expect(pages.message).toContain(`${fragmentAnswerLimits.maxPages} pages`);
    const chars = await refusal(
      await post(gateway, "fragment", { value: "x".repeat(fragmentAnswerLimits.maxChars), page_chars: 1_000_000 }),
    );
    expect(chars.message).toContain("as evidence");
    expect(chars.message).toContain(`${fragmentAnswerLimits.maxChars} characters`);
  });

  it("answers the most pages one answer holds, which reassemble to the value", async () => {
    const value = "😀a".repeat(99_999);
    const response = await post(await app(), "fragment", { value, page_chars: 200 });
    expect(response.status).toBe(200);
    const { fragments } = (await response.json()) as { fragments: { text: string; pages: number }[] };
    expect(fragments).toHaveLength(fragmentAnswerLimits.maxPages);
    expect(fragments.map((page) => page.text).join("")).toBe(JSON.stringify(value));
  });

  it("answers generated page sizes and value sizes within the caps, or refuses exactly those past them", async () => {
    const gateway = await app();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: -5, max: 2_000 }), fc.integer({ min: 2_000, max: 2_000_000 })),
        fc.nat({ max: 300_000 }),
        fc.constantFrom("x", "😀", 'é"', "\ud800"),
        async (pageChars, length, unit) => {
          const value = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
          const points = Array.from(JSON.stringify(value)).length;
          const pages = Math.max(1, Math.ceil(points / pageChars));
          const response = await post(gateway, "fragment", { value, page_chars: pageChars });
          if (pageChars < minPageChars || pageChars > maxPageChars || pages > fragmentAnswerLimits.maxPages) {
            expect((await refusal(response)).code).toBe("INVALID_REQUEST");
            return;
          }
          expect(response.status).toBe(200);
          const { fragments } = (await response.json()) as { fragments: { text: string }[] };
          expect(fragments).toHaveLength(pages);
          expect(fragments.map((page) => page.text).join("")).toBe(JSON.stringify(value));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("keeps 9 MB as 45,000 pages and recalls the last one alone", async () => {
    const gateway = await app();
    const text = "0123456789".repeat(900_000);
    const kept = await putEvidence(gateway, "E9", { text }, minPageChars);
    expect(kept.status).toBe(200);
    const serialized = JSON.stringify({ text });
    const pages = Math.ceil(serialized.length / minPageChars);
    expect(await kept.json()).toMatchObject({ pages, page_chars: minPageChars, total_chars: serialized.length });
    const { value: response, ms } = await timed(() => recall(gateway, "E9", pages - 1));
    expect(response.status).toBe(200);
    const page = (await response.json()) as { text: string; page: number; pages: number; offset: number };
    expect(page).toMatchObject({ page: pages - 1, pages, offset: (pages - 1) * minPageChars });
    expect(page.text).toBe(serialized.slice((pages - 1) * minPageChars));
    expect(ms).toBeLessThan(2_000);
    expect((await refusal(await recall(gateway, "E9", pages))).code).toBe("PAGE_OUT_OF_RANGE");
  });

  it("recalls one page of a result kept with pages of 1 before the minimum, without cutting the others", async () => {
    const store = memoryStore();
    const { app: gateway, records } = await appUnderTest({}, store);
    const text = JSON.stringify({ rows: "😀é".repeat(500_000) });
    const now = Date.now();
    const principal = await principalOf(store, "sk-alice");
    await store.putEvidence({ principal, id: "OLD", text, pageChars: 1, createdAt: now, expiresAt: now + 60_000 });
    const total = Array.from(text).length;
    const { value: response, ms } = await timed(() => recall(gateway, "OLD", 700_000));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ page: 700_000, pages: total, text: Array.from(text)[700_000] });
    expect(records.at(-1)).toMatchObject({ recall: { evidence: "OLD", page: 700_000, pages: total } });
    expect(ms).toBeLessThan(2_000);
  });
});

describe("POST /promptgate/window/context bounds (item 6)", () => {
  it.each([
    ["top_k over the cap", { top_k: contextRequestLimits.maxTopK + 1 }, "top_k"],
    [
      "max_per_document over the cap",
      { max_per_document: contextRequestLimits.maxPerDocument + 1 },
      "max_per_document",
    ],
  ])("refuses %s with 400 INVALID_REQUEST", async (_name, options, param) => {
    const response = await post(await app(), "context", { chunks: [], limit_chars: 100, ...options });
    expect(await refusal(response)).toMatchObject({
      code: "INVALID_REQUEST",
      message: `'${param}' must be a whole number from 1 to 100.`,
    });
  });

  it("refuses the reported request (10,000 chunks, 0.95 MB, top_k 1,000,000) at once", async () => {
    const chunks = Array.from({ length: 10_000 }, (_, index) => ({
      text: Array.from({ length: 10 }, (_, word) => `w${(index * 7 + word) % 4_000}`).join(" "),
      source: `s${index}`,
      score: 1,
    }));
    const gateway = await app();
    const error = await refusal(await post(gateway, "context", { chunks, limit_chars: 1e9 }));
    expect(error.message).toContain(`'chunks' must be an array of at most ${contextRequestLimits.maxChunks}`);
    const few = chunks.slice(0, contextRequestLimits.maxChunks);
    const huge = await post(gateway, "context", { chunks: few, limit_chars: 1e9, top_k: 1_000_000 });
    expect((await refusal(huge)).message).toContain("'top_k'");
  });

  it("refuses chunks whose texts pass the character cap", async () => {
    const text = "word ".repeat(contextRequestLimits.maxTextChars / 10);
    const chunks = [0, 1, 2].map((index) => ({ text, source: `s${index}`, score: 1 }));
    const error = await refusal(await post(await app(), "context", { chunks, limit_chars: 100 }));
    expect(error.message).toContain(`texts may hold at most ${contextRequestLimits.maxTextChars} characters`);
  });

  it("answers generated near-duplicate chunks under generated caps with no two near-duplicates chosen", async () => {
    const gateway = await app();
    const words = fc.array(fc.constantFrom("alpha", "beta", "Gamma", "gamma", "delta", "ε", "7"), { maxLength: 12 });
    const chunk = fc.record({
      text: words.map((list) => list.join(" ")),
      source: fc.constantFrom("a", "b", "c"),
      score: fc.integer({ min: 0, max: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(chunk, { maxLength: 40 }),
        fc.integer({ min: 1, max: 140 }),
        fc.integer({ min: 1, max: 140 }),
        async (chunks, topK, maxPerDocument) => {
          const response = await post(gateway, "context", {
            chunks,
            limit_chars: 100_000,
            top_k: topK,
            max_per_document: maxPerDocument,
          });
          if (topK > contextRequestLimits.maxTopK || maxPerDocument > contextRequestLimits.maxPerDocument) {
            expect((await refusal(response)).code).toBe("INVALID_REQUEST");
            return;
          }
          expect(response.status).toBe(200);
          const { selected } = (await response.json()) as { selected: { index: number }[] };
          expect(selected.length).toBeLessThanOrEqual(topK);
          const sets = selected.map(
            ({ index }) => new Set(chunks[index]?.text.toLowerCase().split(" ").filter(Boolean)),
          );
          for (const [position, set] of sets.entries()) {
            for (const earlier of sets.slice(0, position)) {
              const shared = [...set].filter((word) => earlier.has(word)).length;
              const union = new Set([...set, ...earlier]).size;
              expect(union === 0 ? 1 : shared / union).toBeLessThan(0.8);
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("answers the most the caps allow, near-duplicates throughout, within a loose time", async () => {
    const common = Array.from({ length: 75 }, (_, index) => `c${index}`).join(" ");
    const own = (base: number) => Array.from({ length: 20 }, (_, index) => `u${base}x${index}`).join(" ");
    const chunks = Array.from({ length: contextRequestLimits.maxChunks }, (_, at) => ({
      text: `${common} ${own(at % 99)}${at < 99 ? "" : ` n${at}`}`,
      source: `s${at}`,
      score: at < 99 ? 2 : 1,
    }));
    const textChars = chunks.reduce((sum, chunk) => sum + chunk.text.length, 0);
    expect(textChars).toBeGreaterThan(0.8 * contextRequestLimits.maxTextChars);
    expect(textChars).toBeLessThanOrEqual(contextRequestLimits.maxTextChars);
    const gateway = await app();
    const { value: response, ms } = await timed(() =>
      post(gateway, "context", { chunks, limit_chars: 1_000_000, top_k: 100, max_per_document: 100 }),
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { selected: unknown[] }).selected).toHaveLength(99);
    expect(ms).toBeLessThan(2_000);
  });
});
