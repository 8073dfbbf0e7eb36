import { beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { memoryStore } from "../../src/store/memory-store.js";
import { appUnderTest, type GatewayApp } from "../support/app-under-test.js";
import { inProcessUpstream } from "../support/in-process-upstream.js";

const adminKey = "admin-key-for-listing-tests";
let app: GatewayApp;

beforeAll(async () => {
  const upstream = inProcessUpstream();
  ({ app } = await appUnderTest(
    { ...upstream.environment, PROMPTGATE_ADMIN_KEY: adminKey },
    memoryStore(),
    upstream.fetch,
    {
      keepRecords: true,
    },
  ));
});

type Listing = { calls: CallRecord[]; next: string | null };
type PlainError = { error: { code: string; message: string; promptgate: { ref: string } } };

/** An OpenAI chat call under `policy`; its ref. The answer leaves only once its record is kept. */
async function chat(policy: string, content: string, caseId?: string): Promise<string> {
  const response = await app.request(`/policies/${policy}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(caseId === undefined ? {} : { "x-promptgate-case": caseId }) },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }] }),
  });
  await response.arrayBuffer();
  return response.headers.get("x-promptgate-ref") ?? "";
}

async function geminiCall(content: string): Promise<string> {
  const response = await app.request("/gemini/v1beta/models/gemini-test:generateContent", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: content }] }] }),
  });
  await response.arrayBuffer();
  return response.headers.get("x-promptgate-ref") ?? "";
}

async function list(query: string, key = adminKey): Promise<Response> {
  return app.request(`/promptgate/admin/calls${query}`, { headers: { authorization: `Bearer ${key}` } });
}

async function listed(query: string): Promise<Listing> {
  const response = await list(query);
  expect(response.status).toBe(200);
  return (await response.json()) as Listing;
}

const refsOf = (listing: Listing) => listing.calls.map((call) => call.ref);

describe("listing the latest calls", () => {
  let made: string[];

  beforeAll(async () => {
    made = [];
    for (const index of [1, 2, 3, 4, 5]) made.push(await chat("investigation.bounded", `listing ${index}`));
  });

  it("lists the most recent calls newest first, whole records, with no next page when all fit", async () => {
    const listing = await listed("?limit=5");
    expect(refsOf(listing)).toEqual([...made].reverse());
    expect(listing.calls[0]).toMatchObject({ ref: made[4], decision: "sent", surface: "openai" });
    const all = await listed("");
    expect(all.next).toBeNull();
    expect(refsOf(all).slice(0, 5)).toEqual([...made].reverse());
  });

  it("pages with before=next until next is null, each call once", async () => {
    const seen: string[] = [];
    let query = "?limit=2";
    for (let page = 0; page < 10; page++) {
      const listing = await listed(query);
      seen.push(...refsOf(listing));
      if (listing.next === null) break;
      expect(listing.next).toBe(listing.calls.at(-1)?.ref);
      query = `?limit=2&before=${listing.next}`;
    }
    expect(seen.slice(0, 5)).toEqual([...made].reverse());
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe("filters", () => {
  const refs: Record<string, string> = {};

  beforeAll(async () => {
    refs.rejected = await chat("investigation.bounded", "x".repeat(19_000), "filters-case");
    refs.accepted = await chat("investigation.bounded", "accepted", "filters-case");
    refs.defaultPolicy = await chat("default", "under the default policy");
    refs.gemini = await geminiCall("from gemini");
  });

  it("filters by decision", async () => {
    const listing = await listed("?decision=rejected");
    expect(refsOf(listing)).toContain(refs.rejected);
    expect(listing.calls.every((call) => call.decision === "rejected")).toBe(true);
  });

  it("filters by error code", async () => {
    const listing = await listed("?error=INVESTIGATION_PROMPT_LIMIT");
    expect(refsOf(listing)[0]).toBe(refs.rejected);
    expect(listing.calls.every((call) => call.error === "INVESTIGATION_PROMPT_LIMIT")).toBe(true);
  });

  it("filters by surface", async () => {
    const listing = await listed("?surface=gemini");
    expect(refsOf(listing)).toEqual([refs.gemini]);
  });

  it("filters by policy name, every version of it and no other policy", async () => {
    const listing = await listed("?policy=default");
    expect(refsOf(listing)).toContain(refs.defaultPolicy);
    expect(refsOf(listing)).not.toContain(refs.accepted);
    expect(listing.calls.every((call) => call.policy?.startsWith("default@"))).toBe(true);
  });

  it("filters by a policy version pinned with 12 to 64 hex digits", async () => {
    const policies = (await (await app.request("/promptgate/policies")).json()) as {
      policies: Array<{ name: string; sha256: string; current: boolean }>;
    };
    const version = policies.policies.find((policy) => policy.name === "default" && policy.current);
    const long = await listed(`?policy=default@${version?.sha256.toUpperCase()}`);
    const short = await listed(`?policy=default@${version?.sha256.slice(0, 12)}`);
    expect(refsOf(long)).toContain(refs.defaultPolicy);
    expect(refsOf(short)).toEqual(refsOf(long));
    expect(await listed(`?policy=default@${"0".repeat(12)}`)).toEqual({ calls: [], next: null });
  });

  it("keeps a case's calls oldest first, as before listings existed", async () => {
    expect(refsOf(await listed("?case=filters-case"))).toEqual([refs.rejected, refs.accepted]);
  });

  it("combines a case with filters and pages it with after=next", async () => {
    expect(refsOf(await listed("?case=filters-case&decision=sent"))).toEqual([refs.accepted]);
    const first = await listed("?case=filters-case&limit=1");
    expect(first).toMatchObject({ next: refs.rejected });
    const second = await listed(`?case=filters-case&limit=1&after=${first.next}`);
    expect(second).toMatchObject({ calls: [{ ref: refs.accepted }], next: null });
  });

  it("combines filters without a case", async () => {
    expect(refsOf(await listed("?decision=rejected&policy=default"))).toEqual([]);
    expect(refsOf(await listed("?decision=rejected&policy=investigation.bounded&limit=1"))).toEqual([refs.rejected]);
  });
});

describe("a query the listing cannot take", () => {
  const canary = "CANARY-9d41";
  const refused: Array<[string, string, string]> = [
    ["an unknown parameter", `?${canary}=1`, "Unknown query parameter"],
    ["a parameter in another case", "?Limit=5", "Unknown query parameter"],
    ["a repeated parameter", "?decision=sent&decision=failed", "'decision' is given more than once"],
    ["a limit of 0", "?limit=0", "'limit' must be a whole number from 1 to 500"],
    ["a limit over 500", "?limit=501", "'limit' must be a whole number from 1 to 500"],
    ["a huge limit", `?limit=${"9".repeat(400)}`, "'limit' must be a whole number from 1 to 500"],
    ["a limit that is no number", `?limit=${canary}`, "'limit' must be a whole number"],
    ["a limit written otherwise", "?limit=1e2", "'limit' must be a whole number"],
    ["a signed limit", "?limit=%2B5", "'limit' must be a whole number"],
    ["an empty limit", "?limit=", "'limit' must be a whole number"],
    ["an unknown decision", `?decision=${canary}`, "'decision' must be one of sent, measured, rejected"],
    ["an unknown surface", `?surface=${canary}`, "'surface' must be one of openai, gemini, anthropic"],
    ["a policy that is no policy name", `?policy=${canary}`, "'policy' must be a policy name"],
    ["a policy pinned with too few hex digits", "?policy=default@abc", "'policy' must be a policy name"],
    ["an error code with other characters", `?error=${canary}%27--`, "'error' must be an error code"],
    ["a case over 256 characters", `?case=${"c".repeat(257)}`, "'case' must be 1 to 256 printable ASCII"],
    ["an empty case", "?case=", "'case' must be 1 to 256 printable ASCII"],
    ["a case with a control character", "?case=a%0Ab", "'case' must be 1 to 256 printable ASCII"],
    ["a cursor that is no ref", `?before=${canary}%20x`, "'before' must be the ref of a call"],
    ["an unknown cursor", `?before=ref_${canary}`, "'before' names no call the gateway holds"],
    ["an unknown cursor of a case", `?case=x&after=ref_${canary}`, "'after' names no call the gateway holds"],
    ["before with a case", "?case=x&before=ref_0000000000000000", "With 'case' the calls are listed oldest first"],
    ["after without a case", "?after=ref_0000000000000000", "Without 'case' the calls are listed newest first"],
  ];

  it.each(refused)("answers %s with 400 INVALID_REQUEST naming what it takes", async (_, query, message) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    const body = (await response.json()) as PlainError;
    expect(body.error.code).toBe("INVALID_REQUEST");
    expect(body.error.message).toContain(message);
    expect(body.error.message).not.toContain(canary);
    expect(body.error.promptgate.ref).toBe(response.headers.get("x-promptgate-ref"));
  });

  it("answers a listing without the admin key with 401", async () => {
    expect((await list("?limit=1", "not-the-admin-key")).status).toBe(401);
  });
});
