import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { postgresStore } from "../../src/runtime/node/postgres-store.js";

/** The PostgreSQL server of the tests (see postgres-setup.ts), or "" when there is none and its tests are skipped. */
export const postgresUrl = inject("postgresUrl");

/** A new, empty database on the test server, named for no other test; its connection string. */
export async function freshDatabase(): Promise<string> {
  const name = `promptgate_test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A PostgreSQL store on `url` with the settings a node starts with by default. */
export function testPostgresStore(url: string) {
  return postgresStore({ url, poolSize: 10, statementTimeoutMs: 10_000 });
}
