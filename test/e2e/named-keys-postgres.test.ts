import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { freshDatabase, postgresUrl } from "../support/postgres.js";

// Named keys on gateway nodes that share one PostgreSQL database: each node keeps a store answer for a second, so
// a key made, rotated or revoked through one node counts on every other within that second.

const adminKey = "admin-named-keys-nodes";
const serverKeys = { OPENAI_API_KEY: "sk-server-openai-nodes-000111" };

let database: string;
let nodes: GatewayUnderTest[] = [];

const nodeA = () => nodes[0] as GatewayUnderTest;
const nodeB = () => nodes[1] as GatewayUnderTest;

function admin(node: GatewayUnderTest, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${node.gateway.url}/promptgate/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
  });
}

async function createKey(node: GatewayUnderTest, name: string): Promise<{ id: string; key: string }> {
  const response = await admin(node, "/keys", { method: "POST", body: JSON.stringify({ name, team: "nodes" }) });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; key: string };
}

async function chatStatus(node: GatewayUnderTest, secret: string): Promise<number> {
  const response = await fetch(`${node.gateway.url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "hello" }] }),
  });
  const text = await response.text();
  if (response.status !== 200) expect(JSON.parse(text)).toMatchObject({ error: { code: "authentication" } });
  return response.status;
}

/**
 * Polls a node with `secret` until it answers `status`, for at most `withinMs` after `since` (epoch ms); how long
 * after `since` the request that answered it was sent.
 */
async function statusWithin(node: GatewayUnderTest, secret: string, status: number, since: number, withinMs: number) {
  for (;;) {
    const sentAt = Date.now() - since;
    const seen = await chatStatus(node, secret);
    if (seen === status) return sentAt;
    if (Date.now() - since > withinMs) throw new Error(`still ${seen} after ${Date.now() - since} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(postgresUrl === "")("named keys on two gateway nodes sharing PostgreSQL", () => {
  beforeAll(async () => {
    database = await freshDatabase();
    const environment = {
      PROMPTGATE_DB: database,
      PROMPTGATE_ADMIN_KEY: adminKey,
      PROMPTGATE_KEY_MODE: "keys",
      ...serverKeys,
    };
    nodes = await Promise.all([startGatewayUnderTest(environment), startGatewayUnderTest(environment)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.close()));
  });

  it("answers on node B a key created on node A, and lists it there", async () => {
    const created = await createKey(nodeA(), "made-on-a");
    const client = new OpenAI({ apiKey: created.key, baseURL: `${nodeB().gateway.url}/openai/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: "gpt-4.1", messages: [{ role: "user", content: "hello from B" }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBeTruthy();
    const record = (await (await admin(nodeA(), `/calls/${response.headers.get("x-promptgate-ref")}`)).json()) as {
      key?: unknown;
    };
    expect(record.key).toEqual({ id: created.id, name: "made-on-a", team: "nodes" });
    const listing = (await (await admin(nodeB(), "/keys")).json()) as { data: { id: string }[] };
    expect(listing.data.map((key) => key.id)).toContain(created.id);
  });

  it("refuses on both nodes, within a second and a half, a key they used and node A revoked", async () => {
    const created = await createKey(nodeA(), "revoked-on-a");
    expect(await chatStatus(nodeB(), created.key)).toBe(200);
    expect(await chatStatus(nodeA(), created.key)).toBe(200);
    const revoked = await admin(nodeA(), `/keys/${created.id}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();
    expect(await statusWithin(nodeB(), created.key, 401, revokedAt, 2_000)).toBeLessThanOrEqual(1_500);
    expect(await statusWithin(nodeA(), created.key, 401, revokedAt, 2_000)).toBeLessThanOrEqual(1_500);
  });

  it("takes on node B the new secret of a rotation on node A at once, and refuses the old one within a second and a half", async () => {
    const created = await createKey(nodeA(), "rotated-on-a");
    expect(await chatStatus(nodeB(), created.key)).toBe(200);
    const rotation = await admin(nodeA(), `/keys/${created.id}/rotate`, {
      method: "POST",
      body: JSON.stringify({ grace_seconds: 0 }),
    });
    expect(rotation.status).toBe(200);
    const { key: fresh } = (await rotation.json()) as { key: string };
    expect(await chatStatus(nodeB(), fresh)).toBe(200);
    const rotatedAt = Date.now();
    expect(await statusWithin(nodeB(), created.key, 401, rotatedAt, 2_000)).toBeLessThanOrEqual(1_500);
  });

  it("starts a node without PROMPTGATE_KEY_MODE in gateway-key mode when the store holds a named key", async () => {
    const created = await createKey(nodeA(), "present-at-start");
    const late = await startGatewayUnderTest({
      PROMPTGATE_DB: database,
      PROMPTGATE_ADMIN_KEY: adminKey,
      ...serverKeys,
    });
    try {
      expect(await chatStatus(late, created.key)).toBe(200);
      expect(await chatStatus(late, "sk-client-own-key")).toBe(401);
    } finally {
      await late.close();
    }
  }, 30_000);
});
