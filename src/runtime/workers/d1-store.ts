import { type SqlStatement, sqlStore } from "../../store/sql-store.js";
import type { Store } from "../../store/store.js";

/** One migration of `migrations/`, split into its statements (see scripts/build-worker-assets.ts). */
export interface D1Migration {
  name: string;
  statements: string[];
}

/**
 * Creates the tables of `migrations` in a database that has none yet, so that `wrangler dev` and tests need no
 * manual step; a database that has them is left to `wrangler d1 migrations apply`. The statements say IF NOT EXISTS,
 * so two isolates that both find the database empty do no harm.
 */
async function createTablesIfAbsent(db: D1Database, migrations: readonly D1Migration[]): Promise<void> {
  const found = await db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'calls'")
    .first<{ name: string }>();
  if (found !== null) return;
  const statements = migrations.flatMap((migration) => migration.statements);
  await db.batch(statements.map((statement) => db.prepare(statement)));
}

/**
 * The gateway's durable state in a D1 database: the store and tables of the SQLite store on Node. D1 runs one
 * statement at a time per database and a batch as one transaction, so a case freeze (insert unless present, then
 * read) is exactly-once however many isolates race.
 */
export function d1Store(db: D1Database, migrations: readonly D1Migration[]): Store {
  let ready: Promise<void> | undefined;

  /** The database with its tables; a failed creation is tried again by the next call. */
  async function database(): Promise<D1Database> {
    ready ??= createTablesIfAbsent(db, migrations).catch((error: unknown) => {
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
    // The binding belongs to the isolate; there is nothing to close.
    async close() {},
  });
}
