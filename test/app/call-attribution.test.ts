import { beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { memoryStore } from "../../src/store/memory-store.js";
import type { UsageRow } from "../../src/store/store.js";
import { appUnderTest, type GatewayApp } from "../support/app-under-test.js";
import { inProcessUpstream } from "../support/in-process-upstream.js";

// Calls made with named keys, listed by key and team and summed per key and day through the admin API, on the memory
// store in gateway-key mode.

const adminKey = "admin-key-for-attribution-tests";
let app: GatewayApp;
let records: CallRecord[];

interface MadeKey {
  id: string;
  key: string;
}

async function admin(path: string, init: RequestInit = {}, key = adminKey): Promise<Response> {
  return app.request(`/promptgate/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  });
}

async function makeKey(settings: Record<string, unknown>): Promise<MadeKey> {
  const response = await admin("/keys", { method: "POST", body: JSON.stringify(settings) });
  expect(response.status).toBe(201);
  return (await response.json()) as MadeKey;
}

/** An OpenAI chat call presenting `secret`, under `policy` where given; its ref. */
async function chat(secret: string, policy?: string): Promise<{ status: number; ref: string }> {
  const prefix = policy === undefined ? "" : `/policies/${policy}`;
  const response = await app.request(`${prefix}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "Attribute this call." }] }),
  });
  await response.arrayBuffer();
  return { status: response.status, ref: response.headers.get("x-promptgate-ref") ?? "" };
}

let keyA: MadeKey;
let keyB: MadeKey;
const refsA: string[] = [];
const refsB: string[] = [];
let unnamedRef: string;

beforeAll(async () => {
  const upstream = inProcessUpstream();
  ({ app, records } = await appUnderTest(
    {
      ...upstream.environment,
      PROMPTGATE_ADMIN_KEY: adminKey,
      PROMPTGATE_KEY_MODE: "keys",
      PROMPTGATE_KEYS: "unnamed-gateway-key",
      OPENAI_API_KEY: "sk-server-held",
    },
    memoryStore(),
    upstream.fetch,
    { keepRecords: true },
  ));
  keyA = await makeKey({ name: "ci-a", team: "team-a", policies: ["investigation.bounded"] });
  keyB = await makeKey({ name: "ci-b" });
  const sent = await chat(keyA.key);
  expect(sent.status).toBe(200);
  refsA.push(sent.ref);
  const refused = await chat(keyA.key, "default");
  expect(refused.status).toBe(403);
  refsA.push(refused.ref);
  refsA.push((await chat(keyA.key)).ref);
  refsB.push((await chat(keyB.key)).ref);
  unnamedRef = (await chat("unnamed-gateway-key")).ref;
});

const refsOf = (listing: { calls: CallRecord[] }) => listing.calls.map((call) => call.ref);

describe("listing calls by key and team", () => {
  it("lists the calls of one key, newest first, each naming its key", async () => {
    const response = await admin(`/calls?key=${keyA.id}`);
    expect(response.status).toBe(200);
    const listing = (await response.json()) as { calls: CallRecord[] };
    expect(refsOf(listing)).toEqual([...refsA].reverse());
    expect(listing.calls[0]?.key).toEqual({ id: keyA.id, name: "ci-a", team: "team-a" });
  });

  it("lists the calls of one team's keys, and none of a team no key has", async () => {
    const listing = (await (await admin("/calls?team=team-a")).json()) as { calls: CallRecord[] };
    expect(refsOf(listing)).toEqual([...refsA].reverse());
    const none = (await (await admin("/calls?team=team-z")).json()) as { calls: CallRecord[] };
    expect(none.calls).toEqual([]);
  });

  it("combines the key with the other filters", async () => {
    const listing = (await (await admin(`/calls?key=${keyA.id}&error=POLICY_NOT_ALLOWED`)).json()) as {
      calls: CallRecord[];
    };
    expect(refsOf(listing)).toEqual([refsA[1]]);
  });

  it.each([
    ["key=bad-id", "key"],
    ["key=key_", "key"],
    ["team=-leading-dash", "team"],
    ["team=has%20space", "team"],
    ["key=key_a&key=key_b", "key"],
  ])("refuses %s as a 400 naming the parameter", async (query, parameter) => {
    const response = await admin(`/calls?${query}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; param?: string; message: string } };
    expect(body.error.code).toBe("INVALID_REQUEST");
    expect(body.error.message).toContain(`'${parameter}'`);
  });
});

describe("usage per key and day", () => {
  const today = () => new Date().toISOString().slice(0, 10);
  const usageOf = async (query: string): Promise<UsageRow[]> => {
    const response = await admin(`/usage${query}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: UsageRow[] }).data;
  };
  /** The usage of the records of `refs` as §9 defines it. */
  const expectedOf = (keyId: string, refs: string[]): UsageRow => {
    const kept = records.filter((record) => refs.includes(record.ref));
    const sent = kept.filter((record) => record.decision === "sent");
    const sum = (values: Array<number | undefined>) => values.reduce<number>((total, value) => total + (value ?? 0), 0);
    return {
      day: today(),
      key_id: keyId,
      calls: kept.length,
      rejected: kept.filter((record) => record.error === "POLICY_NOT_ALLOWED").length,
      chars: sum(sent.map((record) => record.provider_check?.conservative_total_chars)),
      tokens_in: sum(kept.map((record) => record.usage?.input_tokens)),
      tokens_out: sum(kept.map((record) => record.usage?.output_tokens)),
    };
  };

  it("sums every named key's calls of the last 30 days, leaving out unnamed keys", async () => {
    const rows = await usageOf("");
    const expected = [expectedOf(keyA.id, refsA), expectedOf(keyB.id, refsB)].sort((a, b) =>
      a.key_id < b.key_id ? -1 : 1,
    );
    expect(rows).toEqual(expected);
    expect(rows.find((row) => row.key_id === keyA.id)).toMatchObject({ calls: 3, rejected: 1 });
    expect(records.find((record) => record.ref === unnamedRef)?.key).toBeUndefined();
  });

  it("counts the provider check's conservative chars of the calls sent, and the tokens reported", () => {
    const row = expectedOf(keyA.id, refsA);
    expect(row.chars).toBeGreaterThan(0);
    expect(row.tokens_in + row.tokens_out).toBeGreaterThan(0);
  });

  it("sums one key's, or one team's, calls", async () => {
    expect(await usageOf(`?key=${keyB.id}`)).toEqual([expectedOf(keyB.id, refsB)]);
    expect(await usageOf("?team=team-a")).toEqual([expectedOf(keyA.id, refsA)]);
  });

  it("sums only the calls from `from` until before `to`", async () => {
    expect(await usageOf("?from=2020-01-01&to=2020-12-31")).toEqual([]);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    expect(await usageOf(`?key=${keyB.id}&from=${today()}&to=${tomorrow}`)).toEqual([expectedOf(keyB.id, refsB)]);
  });

  it.each([
    ["from=yesterday", "from"],
    ["to=2026-13-45", "to"],
    ["from=2026-02-01T10:00", "from"],
    ["from=2026-03-01&to=2026-02-01", "from"],
    ["from=2025-01-01&to=2026-03-01", "from"],
    ["key=nope", "key"],
    ["team=no/slash", "team"],
    ["day=2026-03-01", "day"],
    ["team=a&team=b", "team"],
  ])("refuses %s as a 400", async (query, parameter) => {
    const response = await admin(`/usage?${query}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("INVALID_REQUEST");
    if (parameter !== "day") expect(body.error.message).toContain(`'${parameter}'`);
  });

  it("takes at most 400 days", async () => {
    const response = await admin("/usage?from=2025-01-01T00:00:00Z&to=2026-02-05T00:00:00Z");
    expect(response.status).toBe(200);
  });

  it("answers only the admin key", async () => {
    expect((await admin("/usage", {}, "not-the-admin-key")).status).toBe(401);
    expect((await admin("/usage", {}, keyA.key)).status).toBe(401);
  });
});
