import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";

// The admin routes of the worker of wrangler.toml inside workerd: the call listing reads D1 through the same
// SQL as SQLite on Node, and a policy reload is a deploy there.

const adminKey = "admin-test-key";

function send(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`http://promptgate.test${path}`, init));
}

function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return send(`/promptgate/admin${path}`, { ...init, headers: { authorization: `Bearer ${adminKey}` } });
}

async function chat(policy: string, content: string, caseId: string): Promise<string> {
  const response = await send(`/policies/${policy}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-promptgate-case": caseId },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }] }),
  });
  await response.arrayBuffer();
  return response.headers.get("x-promptgate-ref") ?? "";
}

type Listing = { calls: CallRecord[]; next: string | null };

async function listed(query: string): Promise<Listing> {
  const response = await admin(`/calls${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Listing;
}

/** The listing once `count` records are in: on Workers a record is written through waitUntil, after its answer. */
async function listedOnce(query: string, count: number): Promise<Listing> {
  let listing = await listed(query);
  for (let attempt = 0; attempt < 50 && listing.calls.length < count; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    listing = await listed(query);
  }
  return listing;
}

const refsOf = (listing: Listing) => listing.calls.map((call) => call.ref);

describe("the call listing on Workers", () => {
  const refs: string[] = [];

  beforeAll(async () => {
    refs.push(await chat("investigation.bounded", "edge listing one", "edge-listing"));
    refs.push(await chat("investigation.bounded", "x".repeat(19_000), "edge-listing"));
    refs.push(await chat("default", "edge listing three", "edge-listing"));
    await listedOnce("?case=edge-listing", 3);
  });

  it("lists the latest calls newest first and pages with before=next", async () => {
    const first = await listed("?limit=2");
    expect(refsOf(first)).toEqual([refs[2], refs[1]]);
    expect(first.next).toBe(refs[1]);
    const second = await listed(`?limit=2&before=${first.next}`);
    expect(refsOf(second)[0]).toBe(refs[0]);
  });

  it("keeps a case's calls oldest first and combines it with filters", async () => {
    expect(refsOf(await listed("?case=edge-listing"))).toEqual(refs);
    expect(refsOf(await listed("?case=edge-listing&decision=rejected"))).toEqual([refs[1]]);
    expect(refsOf(await listed("?case=edge-listing&policy=default"))).toEqual([refs[2]]);
    expect(refsOf(await listed("?case=edge-listing&error=INVESTIGATION_PROMPT_LIMIT&surface=openai"))).toEqual([
      refs[1],
    ]);
  });

  it("refuses a query it cannot take with 400", async () => {
    for (const query of ["?limit=501", "?unknown=1", "?decision=sent&decision=sent", "?before=ref_0000000000000000"]) {
      const response = await admin(`/calls${query}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: "INVALID_REQUEST" } });
    }
  });
});

describe("the policy reload on Workers", () => {
  it("answers 501: policies are bundled at build time, so a change is a deploy", async () => {
    const response = await admin("/policies/reload", { method: "POST" });
    expect(response.status).toBe(501);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("POLICY_RELOAD_UNAVAILABLE");
    expect(error.message).toContain("a policy change is a new deploy");
  });
});
