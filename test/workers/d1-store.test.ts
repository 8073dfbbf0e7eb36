import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { d1Store } from "../../src/runtime/workers/d1-store.js";
import { migrations } from "../../src/runtime/workers/generated/assets.js";
import { describeStore, storeTables } from "../store/store-contract.js";

const tables = [...storeTables, "d1_migrations"];

async function dropTables(): Promise<void> {
  await env.DB.batch(tables.map((table) => env.DB.prepare(`DROP TABLE IF EXISTS ${table}`)));
}

/** The tables of schema version 1 with one response history, as a worker of that version created them on first use. */
async function versionOneDatabase(): Promise<void> {
  const initial = migrations[0];
  if (initial === undefined) throw new Error("No initial migration is bundled.");
  await env.DB.batch(initial.statements.map((statement) => env.DB.prepare(statement)));
  await env.DB.prepare("INSERT INTO response_histories (id, chars, expires_at) VALUES (?, ?, ?)")
    .bind("resp_old", 9_000, 10_000)
    .run();
}

async function ledger(): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>();
  return results.map((row) => row.name);
}

const oldHistory = { id: "resp_old", chars: 9_000, outputKnown: true, expiresAt: 10_000 };

// Each test starts from a database without tables, so that every test also creates them on first use.
describeStore("d1Store", async () => {
  await dropTables();
  return d1Store(env.DB, migrations);
});

describe("d1Store migrations", () => {
  beforeEach(dropTables);

  it("records every migration it applies in wrangler's d1_migrations ledger", async () => {
    await d1Store(env.DB, migrations).getResponseHistory("resp_none", 0);
    expect(await ledger()).toEqual(migrations.map((migration) => migration.name));
  });

  it("upgrades tables a worker of schema version 1 created, keeping their response histories as known", async () => {
    await versionOneDatabase();
    const store = d1Store(env.DB, migrations);
    expect(await store.getResponseHistory("resp_old", 0)).toEqual(oldHistory);
    await store.putResponseHistory({ id: "resp_new", chars: 100, outputKnown: false, expiresAt: 10_000 });
    await store.completeResponseHistory("resp_new", 50);
    expect(await store.getResponseHistory("resp_new", 0)).toMatchObject({ chars: 150, outputKnown: true });
  });

  it("applies only the migrations that wrangler's ledger lacks", async () => {
    await versionOneDatabase();
    await env.DB.prepare(
      "CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
    ).run();
    await env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(migrations[0]?.name).run();
    const store = d1Store(env.DB, migrations);
    expect(await store.getResponseHistory("resp_old", 0)).toEqual(oldHistory);
    expect(await ledger()).toEqual(migrations.map((migration) => migration.name));
  });

  it("serves a database that another isolate is migrating at the same time", async () => {
    await versionOneDatabase();
    const stores = [d1Store(env.DB, migrations), d1Store(env.DB, migrations), d1Store(env.DB, migrations)];
    const found = await Promise.all(stores.map((store) => store.getResponseHistory("resp_old", 0)));
    expect(found).toEqual([oldHistory, oldHistory, oldHistory]);
    expect(await ledger()).toEqual(migrations.map((migration) => migration.name));
  });
});
