import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { freshDatabase, postgresUrl } from "../support/postgres.js";

// A gateway on PostgreSQL whose database goes away and comes back: while it is gone a call that needs it fails as
// `internal` and /readyz says so; once it is back the same gateway serves again, without a restart.

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe.skipIf(postgresUrl === "")("a PostgreSQL store that goes away and comes back", () => {
  let harness: GatewayUnderTest;
  let name: string;

  beforeAll(async () => {
    const url = await freshDatabase();
    name = new URL(url).pathname.slice(1);
    harness = await startGatewayUnderTest({ PROMPTGATE_DB: url });
  });
  afterAll(async () => {
    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await harness.close();
  });

  const call = async () => {
    const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-client", "x-promptgate-case": "c-1" },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hello" }] }),
    });
    return { status: response.status, body: (await response.json()) as { error?: { code?: string } } };
  };
  const ready = async () => (await fetch(`${harness.gateway.url}/readyz`)).status;

  it("fails calls as internal and is not ready while the database is gone, and serves again once it is back", async () => {
    expect((await call()).status).toBe(200);
    expect(await ready()).toBe(200);

    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    const failed = await call();
    expect(failed.status).toBe(500);
    expect(failed.body.error?.code).toBe("internal");
    expect(await ready()).toBe(503);

    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    expect(await ready()).toBe(200);
    expect((await call()).status).toBe(200);
  }, 30_000);
});
