import { describe, expect, it } from "vitest";
import { fragment } from "../../src/window/fragment.js";
import { appUnderTest } from "../support/app-under-test.js";

// The window toolkit over HTTP (POST /promptgate/window/fragment), through app.request(): runs on Node and in
// workerd (test/http is shared).

async function app(environment: Record<string, string> = {}) {
  return (await appUnderTest(environment)).app;
}

function post(body: string, headers: Record<string, string> = {}): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json", ...headers }, body };
}

describe("POST /promptgate/window/fragment", () => {
  it("answers a value's pages as json_fragment objects", async () => {
    const gateway = await app();
    const response = await gateway.request(
      "/promptgate/window/fragment",
      post(JSON.stringify({ value: { rows: ["😀".repeat(500)] }, page_chars: 200 })),
    );
    expect(response.status).toBe(200);
    const { fragments } = (await response.json()) as { fragments: { text: string; pages: number }[] };
    expect(fragments.map((page) => page.text).join("")).toBe(JSON.stringify({ rows: ["😀".repeat(500)] }));
    expect(fragments).toHaveLength(3);
    expect(fragments[0]?.pages).toBe(fragments.length);
  });

  it.each([
    ["no value", JSON.stringify({ page_chars: 10 })],
    ["a page size of zero", JSON.stringify({ value: 1, page_chars: 0 })],
    ["a page size under 200", JSON.stringify({ value: 1, page_chars: 199 })],
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

describe("evidence and recall", () => {
  const result = {
    rows: Array.from({ length: 40 }, (_, index) => ({ id: `E${index}`, text: "Beleg 😀 ".repeat(20) })),
  };

  function put(gateway: Awaited<ReturnType<typeof app>>, id: string, key = "sk-alice") {
    return gateway.request(`/promptgate/window/evidence/${id}`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(result),
    });
  }

  function recall(gateway: Awaited<ReturnType<typeof app>>, body: unknown, key = "sk-alice") {
    return gateway.request(
      "/promptgate/window/recall",
      post(JSON.stringify(body), { authorization: `Bearer ${key}`, "x-promptgate-case": "case-7" }),
    );
  }

  async function codeOf(response: Response): Promise<string> {
    expect(response.status).toBe(400);
    return ((await response.json()) as { error: { code: string } }).error.code;
  }

  it("keeps a result and recalls one page of it, as fragment pages it, recording the choice", async () => {
    const { app: gateway, records } = await appUnderTest();
    const kept = await put(gateway, "E000001");
    expect(kept.status).toBe(200);
    const pages = await fragment(result);
    expect(await kept.json()).toMatchObject({ id: "E000001", pages: pages.length, page_chars: 1600 });
    const response = await recall(gateway, { kind: "recall", evidence_refs: ["E000001"], page: 1 });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(pages[1]);
    expect(records.at(-1)).toMatchObject({
      surface: "window",
      route: "/recall",
      decision: "answered",
      case: "case-7",
      recall: { evidence: "E000001", page: 1, pages: pages.length },
    });
  });

  it("refuses an unknown id, another caller's evidence, a page out of range and more than one evidence", async () => {
    const gateway = await app();
    await put(gateway, "E000001");
    expect(await codeOf(await recall(gateway, { kind: "recall", evidence_refs: ["E999999"], page: 0 }))).toBe(
      "EVIDENCE_NOT_FOUND",
    );
    expect(
      await codeOf(await recall(gateway, { kind: "recall", evidence_refs: ["E000001"], page: 0 }, "sk-mallory")),
    ).toBe("EVIDENCE_NOT_FOUND");
    expect(await codeOf(await recall(gateway, { kind: "recall", evidence_refs: ["E000001"], page: 99 }))).toBe(
      "PAGE_OUT_OF_RANGE",
    );
    expect(await codeOf(await recall(gateway, { kind: "recall", evidence_refs: ["E000001"], page: -1 }))).toBe(
      "PAGE_OUT_OF_RANGE",
    );
    expect(
      await codeOf(await recall(gateway, { kind: "recall", evidence_refs: ["E000001", "E000002"], page: 0 })),
    ).toBe("RECALL_ONE_EVIDENCE");
    expect(await codeOf(await recall(gateway, { kind: "recall", evidence_refs: [], page: 0 }))).toBe(
      "RECALL_ONE_EVIDENCE",
    );
    expect(await codeOf(await recall(gateway, { kind: "search", evidence_refs: ["E000001"] }))).toBe("INVALID_REQUEST");
  });

  it("refuses an evidence id it would not repeat in a record", async () => {
    const gateway = await app();
    expect(await codeOf(await put(gateway, "a%20b"))).toBe("INVALID_REQUEST");
  });

  it("forgets a deleted result for its caller only", async () => {
    const gateway = await app();
    await put(gateway, "E000001");
    await put(gateway, "E000001", "sk-bob");
    const deleted = await gateway.request("/promptgate/window/evidence/E000001", {
      method: "DELETE",
      headers: { authorization: "Bearer sk-alice" },
    });
    expect(deleted.status).toBe(204);
    expect(await codeOf(await recall(gateway, { kind: "recall", evidence_refs: ["E000001"], page: 0 }))).toBe(
      "EVIDENCE_NOT_FOUND",
    );
    expect((await recall(gateway, { kind: "recall", evidence_refs: ["E000001"], page: 0 }, "sk-bob")).status).toBe(200);
  });

  it("bounds what one caller keeps: the 1,001st result is EVIDENCE_LIMIT, a replaced one is not counted twice", async () => {
    const gateway = await app();
    const small = (id: string, key = "sk-alice") =>
      gateway.request(`/promptgate/window/evidence/${id}`, {
        method: "PUT",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: '{"v": 1}',
      });
    for (let index = 0; index < 1_000; index += 1) expect((await small(`E${index}`)).status).toBe(200);
    expect(await codeOf(await small("E1000"))).toBe("EVIDENCE_LIMIT");
    expect((await small("E999")).status).toBe(200);
    expect((await small("E1000", "sk-bob")).status).toBe(200);
  });
});

describe("POST /promptgate/window/checkpoint", () => {
  async function due(body: unknown): Promise<Response> {
    return (await app()).request("/promptgate/window/checkpoint", post(JSON.stringify(body)));
  }

  it("advises a checkpoint above 4,000 bytes of results or 2,000 of log, or the limits given", async () => {
    for (const [body, expected] of [
      [{ results_bytes: 4_000, log_bytes: 2_000 }, false],
      [{ results_bytes: 4_001, log_bytes: 0 }, true],
      [{ results_bytes: 0, log_bytes: 2_001 }, true],
      [{ results_bytes: 500, log_bytes: 0, limits: { results_bytes: 400 } }, true],
      [{ results_bytes: 5_000, log_bytes: 0, limits: { results_bytes: 8_000, log_bytes: 10 } }, false],
    ] as const) {
      const response = await due(body);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ due: expected });
    }
  });

  it.each([
    ["no sizes", {}],
    ["a negative size", { results_bytes: -1, log_bytes: 0 }],
    ["a size that is not a whole number", { results_bytes: 1.5, log_bytes: 0 }],
    ["limits that are not an object", { results_bytes: 1, log_bytes: 0, limits: 3 }],
    ["a limit that is not a number", { results_bytes: 1, log_bytes: 0, limits: { log_bytes: "9" } }],
  ])("refuses %s", async (_name, body) => {
    expect((await due(body)).status).toBe(400);
  });
});

describe("POST /promptgate/window/signature", () => {
  it("answers a schema's signature and form example with their sizes", async () => {
    const gateway = await app();
    const schema = {
      type: "object",
      properties: { summary: { type: "string", maxLength: 400 }, score: { type: "integer", minimum: 0 } },
      required: ["summary"],
    };
    const response = await gateway.request("/promptgate/window/signature", post(JSON.stringify({ schema })));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      signature: "summary: str≤400\nscore?: int≥0",
      signature_chars: 30,
      schema_chars: JSON.stringify(schema).length,
    });
  });

  it("refuses a body without a schema object", async () => {
    const gateway = await app();
    const response = await gateway.request("/promptgate/window/signature", post(JSON.stringify({ schema: "x" })));
    expect(response.status).toBe(400);
  });
});

describe("POST /promptgate/window/context", () => {
  it("answers the bounded block, its selection, its sources and its size", async () => {
    const gateway = await app();
    const chunks = [
      { text: "Die Auftragsklärung ist der erste Schritt.", source: "Coaching.pdf", page: 12, score: 0.9 },
      { text: "Skalenfragen ermöglichen eine Einschätzung.", source: "Methoden.pdf", page: 45, score: 0.8 },
    ];
    const response = await gateway.request(
      "/promptgate/window/context",
      post(JSON.stringify({ chunks, limit_chars: 200, label: "Source", page_label: "p." })),
    );
    expect(response.status).toBe(200);
    const built = (await response.json()) as { block: string; chars: number; sources: unknown[] };
    expect(built.block).toBe(
      "[Source 1: Coaching.pdf, p. 12]\nDie Auftragsklärung ist der erste Schritt.\n\n---\n\n[Source 2: Methoden.pdf, p. 45]\nSkalenfragen ermöglichen eine Einschätzung.",
    );
    expect(built.chars).toBe(Array.from(built.block).length);
    expect(built.sources).toHaveLength(2);
  });

  it.each([
    ["no limit", { chunks: [] }],
    ["chunks that are not an array", { chunks: {}, limit_chars: 10 }],
    ["a chunk without a score", { chunks: [{ text: "t", source: "s" }], limit_chars: 10 }],
    ["a similarity above 1", { chunks: [], limit_chars: 10, similarity: 2 }],
  ])("refuses %s with 400 INVALID_REQUEST", async (_name, body) => {
    const gateway = await app();
    const response = await gateway.request("/promptgate/window/context", post(JSON.stringify(body)));
    expect(response.status).toBe(400);
  });
});
