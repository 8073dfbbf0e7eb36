import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { SqlStatement } from "../../store/sql-statement.js";
import { sqlStore } from "../../store/sql-store.js";
import type { Store } from "../../store/store.js";
import { atTurnEnd } from "./turn-end.js";

const migrationsFolder = new URL("../../../migrations/", import.meta.url);

/** `migrations[n]` takes a database from schema version n to n + 1: the files of `migrations/`, shared with D1. */
const migrations: readonly string[] = readdirSync(migrationsFolder)
  .filter((name) => name.endsWith(".sql"))
  .sort()
  .map((name) => readFileSync(new URL(name, migrationsFolder), "utf8"));

/** The schema this code reads and writes, kept in `PRAGMA user_version`. */
export const schemaVersion = migrations.length;

/** How long a connection waits for another process's write lock before failing. */
const busyTimeoutMs = 5_000;

function readUserVersion(database: Database.Database): number {
  return Number(database.pragma("user_version", { simple: true }));
}

/** A database written by a newer promptgate, whose schema this code does not know. */
export class NewerSchemaError extends Error {
  override readonly name = "NewerSchemaError";

  constructor(
    readonly path: string,
    readonly stored: number,
  ) {
    super(
      `The database ${path} has schema version ${stored}, newer than version ${schemaVersion} of this promptgate; refusing to open it.`,
    );
  }

  static isInstance(value: unknown): value is NewerSchemaError {
    return value instanceof NewerSchemaError;
  }
}

function newerSchemaError(path: string, stored: number): Error {
  return new NewerSchemaError(path, stored);
}

/** Brings an older schema to `schemaVersion` in one IMMEDIATE transaction. */
function migrate(database: Database.Database, path: string): void {
  database
    .transaction(() => {
      // Read again under the write lock: another process may have migrated since the first read.
      const current = readUserVersion(database);
      if (current > schemaVersion) throw newerSchemaError(path, current);
      for (let version = current; version < schemaVersion; version += 1) {
        const migration = migrations[version];
        if (migration === undefined) throw new Error(`No migration from schema version ${version} is known.`);
        database.exec(migration);
      }
      database.pragma(`user_version = ${schemaVersion}`);
    })
    .immediate();
}

/** Opens the file with WAL, NORMAL sync and a busy timeout; migrates only when its schema version differs. */
function openDatabase(path: string): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path);
  try {
    database.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const stored = readUserVersion(database);
    if (stored > schemaVersion) throw newerSchemaError(path, stored);
    // WAL is a property of the file: once set, later connections take it instead of switching it again.
    if (database.pragma("journal_mode", { simple: true }) !== "wal") database.pragma("journal_mode = WAL");
    database.pragma("synchronous = NORMAL");
    if (stored !== schemaVersion) migrate(database, path);
    return database;
  } catch (error) {
    database.close();
    throw error;
  }
}

/** A write waiting for the next group commit, and how to tell its caller the outcome. */
interface QueuedWrite {
  statement: SqlStatement;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Single writes (a call record per call, above all) run together in one transaction at the end of each turn of the
 * event loop (`atTurnEnd`) instead of one commit each, which is most of a write's cost. A caller's promise settles
 * only after the commit that holds its write, so an awaited write is as durable as before; a statement that fails
 * fails alone and the rest of its group commits.
 */
export function groupCommit(
  database: Database.Database,
  execute: (statement: SqlStatement) => void,
): { run(statement: SqlStatement): Promise<void>; flush(): void } {
  let queue: QueuedWrite[] = [];
  const commit = database.transaction((writes: QueuedWrite[]) => {
    const outcomes: Array<() => void> = [];
    for (const write of writes) {
      try {
        execute(write.statement);
        outcomes.push(write.resolve);
      } catch (error) {
        outcomes.push(() => write.reject(error));
      }
    }
    return outcomes;
  });
  const flush = () => {
    const writes = queue;
    if (writes.length === 0) return;
    queue = [];
    let outcomes: Array<() => void>;
    try {
      outcomes = commit.immediate(writes);
    } catch (error) {
      for (const write of writes) write.reject(error);
      return;
    }
    for (const settle of outcomes) settle();
  };
  return {
    run: (statement) =>
      new Promise((resolve, reject) => {
        if (queue.length === 0) atTurnEnd(flush);
        queue.push({ statement, resolve, reject });
      }),
    flush,
  };
}

/**
 * The gateway's durable state in one SQLite file (better-sqlite3, WAL). Several processes may share the file:
 * every write is a single statement or an IMMEDIATE transaction.
 */
export function sqliteStore(path: string): Store {
  const database = openDatabase(path);
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = database.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  // IMMEDIATE takes the write lock first, so the write and the read see one state even across processes.
  const writeThenRead = database.transaction((write: SqlStatement, read: SqlStatement): unknown => {
    prepared(write[0]).run(...write[1]);
    return prepared(read[0]).get(...read[1]);
  });
  // A statement that fails throws out of the transaction, which better-sqlite3 then rolls back.
  const batch = database.transaction((statements: readonly SqlStatement[]): unknown[][] =>
    statements.map(([sql, params]) => {
      const statement = prepared(sql);
      if (statement.reader) return statement.all(...params);
      statement.run(...params);
      return [];
    }),
  );
  const writes = groupCommit(database, (statement) => prepared(statement[0]).run(...statement[1]));
  return sqlStore({
    run: writes.run,
    async first<Row>([sql, params]: SqlStatement) {
      return prepared(sql).get(...params) as Row | undefined;
    },
    async all<Row>([sql, params]: SqlStatement) {
      return prepared(sql).all(...params) as Row[];
    },
    async writeThenRead<Row>(write: SqlStatement, read: SqlStatement) {
      return writeThenRead.immediate(write, read) as Row | undefined;
    },
    async batch<Row>(statements: readonly SqlStatement[]) {
      return batch.immediate(statements) as Row[][];
    },
    // SQLITE_MAX_VARIABLE_NUMBER of the SQLite better-sqlite3 builds.
    maxParameters: 32_766,
    async close() {
      writes.flush();
      database.close();
    },
  });
}
