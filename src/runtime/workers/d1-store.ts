import type { SqlStatement } from "../../store/sql-statement.js";
import { sqlStore } from "../../store/sql-store.js";
import type { Store } from "../../store/store.js";

/** One migration of `migrations/`, split into its statements (see scripts/build-worker-assets.ts). */
export interface D1Migration {
  /** The file name, e.g. `0001_initial.sql`, as `wrangler d1 migrations apply` records it. */
  name: string;
  statements: string[];
}

/**
 * The ledger of applied migrations that `wrangler d1 migrations apply` keeps (its default
 * `migrations_table`, with its columns): the worker keeps the same one, so that neither applies a
 * migration the other has applied.
 */
const ledger = "d1_migrations";

async function appliedMigrations(db: D1Database): Promise<Set<string>> {
  const found = await db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?")
    .bind(ledger)
    .first<{ name: string }>();
  if (found === null) return new Set();
  const { results } = await db.prepare(`SELECT name FROM ${ledger}`).all<{ name: string }>();
  return new Set(results.map((row) => row.name));
}

/**
 * Applies the migrations the ledger lacks, each with its ledger entry, in one batch (one transaction),
 * so that `wrangler dev`, tests and an upgraded worker need no manual step. A database made before
 * the ledger (by a worker that created the tables of 0001 on first use) gets 0001 again, whose
 * statements say IF NOT EXISTS, and the rest. When another isolate applied the same migrations
 * first, this batch fails on a statement that runs only once and is rolled back; the ledger then
 * says all is done.
 */
async function migrate(db: D1Database, migrations: readonly D1Migration[]): Promise<void> {
  const applied = await appliedMigrations(db);
  const missing = migrations.filter((migration) => !applied.has(migration.name));
  if (missing.length === 0) return;
  const statements = [
    db.prepare(
      `CREATE TABLE IF NOT EXISTS ${ledger} (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)`,
    ),
    ...missing.flatMap((migration) => [
      ...migration.statements.map((statement) => db.prepare(statement)),
      db.prepare(`INSERT INTO ${ledger} (name) VALUES (?)`).bind(migration.name),
    ]),
  ];
  try {
    await db.batch(statements);
  } catch (error) {
    const now = await appliedMigrations(db);
    if (migrations.some((migration) => !now.has(migration.name))) throw error;
  }
}

/**
 * The gateway's durable state in a D1 database: the store and tables of the SQLite store on Node. D1 runs one
 * statement at a time per database and a batch as one transaction, so a case freeze (insert unless present, then
 * read) is exactly-once however many isolates race.
 */
export function d1Store(db: D1Database, migrations: readonly D1Migration[]): Store {
  let ready: Promise<void> | undefined;

  /** The database with its tables; a failed migration is tried again by the next call. */
  async function database(): Promise<D1Database> {
    ready ??= migrate(db, migrations).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    await ready;
    return db;
  }

  const bound = async ([sql, params]: SqlStatement) => (await database()).prepare(sql).bind(...params);

  return sqlStore({
    async run(statement) {
      await (await bound(statement)).run();
    },
    async first<Row>(statement: SqlStatement) {
      return (await (await bound(statement)).first<Row>()) ?? undefined;
    },
    async all<Row>(statement: SqlStatement) {
      return (await (await bound(statement)).all<Row>()).results;
    },
    async writeThenRead<Row>(write: SqlStatement, read: SqlStatement) {
      const [, result] = await db.batch<Row>([await bound(write), await bound(read)]);
      return result?.results[0];
    },
    // A D1 batch is one transaction: a statement that fails rolls back the batch.
    async batch<Row>(statements: readonly SqlStatement[]) {
      const prepared = await Promise.all(statements.map(bound));
      return (await db.batch<Row>(prepared)).map((result) => result.results);
    },
    // D1 binds at most 100 parameters a statement.
    maxParameters: 100,
    // The binding belongs to the isolate; there is nothing to close.
    async close() {},
  });
}
