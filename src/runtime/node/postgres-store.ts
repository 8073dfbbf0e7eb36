import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import type { CallRecord } from "../../record/call-record.js";
import { callUsageOf } from "../../store/call-usage.js";
import type { SqlStatement } from "../../store/sql-statement.js";
import { keyRotationStatements, type SqlDialect, type SqlExecutor, sqlStore } from "../../store/sql-store.js";
import type { Store } from "../../store/store.js";
import { storedStatement } from "../../store/stored-text.js";
import { atTurnEnd } from "./turn-end.js";

const migrationsFolder = new URL("../../../migrations/postgres/", import.meta.url);

/** PostgreSQL's migrations by the schema version each brings the database to (the number its file name starts with). */
const migrations: readonly { version: number; sql: string }[] = readdirSync(migrationsFolder)
  .filter((name) => /^\d{4}_.*\.sql$/.test(name))
  .sort()
  .map((name) => ({ version: Number(name.slice(0, 4)), sql: readFileSync(new URL(name, migrationsFolder), "utf8") }));

/** The schema this code reads and writes; the same number as the SQLite dialect's (a test holds them together). */
export const postgresSchemaVersion = migrations.at(-1)?.version ?? 0;

/** The advisory lock key under which one node at a time migrates: "promptgt" as a 64-bit number. */
const migrationLock = "8101981911098705524";

/** The advisory lock key under which one node at a time sweeps expired rows. */
const sweepLock = "8101981911098705525";

/** How a PostgreSQL store connects and how long a statement may take. */
export interface PostgresOptions {
  /** The connection string, `postgres://user:password@host:port/database`. */
  url: string;
  /** Connections kept open at most (`PROMPTGATE_DB_POOL`). */
  poolSize: number;
  /** Milliseconds a statement may run before the server cancels it (`PROMPTGATE_DB_STATEMENT_TIMEOUT_MS`). */
  statementTimeoutMs: number;
}

/** A database migrated by a newer promptgate, whose schema this code does not know. */
export class NewerPostgresSchemaError extends Error {
  override readonly name = "NewerPostgresSchemaError";

  constructor(readonly stored: number) {
    super(
      `The PostgreSQL database has schema version ${stored}, newer than version ${postgresSchemaVersion} of this promptgate; refusing to use it.`,
    );
  }

  static isInstance(value: unknown): value is NewerPostgresSchemaError {
    return value instanceof NewerPostgresSchemaError;
  }
}

/** PostgreSQL numbers its parameters: `?` in the store's statements becomes `$1`, `$2` …, outside quoted text. */
function numbered(sql: string): string {
  let index = 0;
  let quoted = false;
  let out = "";
  for (const char of sql) {
    if (char === "'") quoted = !quoted;
    if (char === "?" && !quoted) {
      index += 1;
      out += `$${index}`;
    } else {
      out += char;
    }
  }
  return out;
}

/** Statements are numbered once: the store uses a few dozen, again and again. */
const numberedStatements = new Map<string, string>();

function textOf(sql: string): string {
  let text = numberedStatements.get(sql);
  if (text === undefined) {
    text = numbered(sql);
    // A batch's statement, one per batch size, is numbered each time rather than kept.
    if (sql.length < 2_000) numberedStatements.set(sql, text);
  }
  return text;
}

/** The columns a call is appended with: its record, and the fields listings and usage read written beside it. */
const callColumnNames = [
  "ref",
  "case_id",
  "time",
  "record",
  "decision",
  "surface",
  "error",
  "policy",
  "policy_name",
  "key_id",
  "team",
  "sent_chars",
  "tokens_in",
  "tokens_out",
] as const;
const callColumns = callColumnNames.join(", ");
const callColumnValues = callColumnNames.map(() => "?").join(", ");

/**
 * PostgreSQL: a call's listed fields are written beside its record (see `SqlDialect`), and the planner, which keeps
 * statistics, needs no help choosing an index.
 */
const postgresDialect: SqlDialect = {
  appendCall(record: CallRecord, json: string): SqlStatement {
    const policy = record.policy ?? null;
    const at = policy?.indexOf("@") ?? -1;
    const usage = callUsageOf(record);
    return [
      `INSERT INTO calls (${callColumns}) VALUES (${callColumnValues}) ON CONFLICT (ref) DO NOTHING`,
      [
        record.ref,
        record.case ?? null,
        record.time,
        json,
        record.decision,
        record.surface,
        record.error ?? null,
        policy,
        policy === null ? null : at === -1 ? "" : policy.slice(0, at),
        usage.keyId ?? null,
        usage.team ?? null,
        usage.sentChars ?? null,
        usage.tokensIn ?? null,
        usage.tokensOut ?? null,
      ],
    ];
  },
  unindexed: (column) => column,
};

/** BIGINT (epoch milliseconds, counts, sums) as a JavaScript number: every value the store keeps is below 2^53. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/** A call record waiting for the next batch, and how to tell its caller the outcome. */
interface QueuedRecord {
  record: CallRecord;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The call records of one event-loop turn appended in one multi-row INSERT, one commit for all, instead of one each;
 * a caller's promise settles once the statement holding its record has committed, so an awaited append is as
 * durable as a single one. A batch the server refuses is appended record by record, so that one record it cannot
 * take fails alone.
 */
function batchedAppends(
  query: (statement: SqlStatement) => Promise<unknown>,
  appendOne: (record: CallRecord) => Promise<void>,
): (record: CallRecord) => Promise<void> {
  const queue: QueuedRecord[] = [];
  const flush = async () => {
    // At most 1,000 records a statement: PostgreSQL takes 65,535 parameters, fourteen a record.
    const batch = queue.splice(0, 1_000);
    if (queue.length > 0) atTurnEnd(() => void flush());
    if (batch.length === 1) {
      const [only] = batch as [QueuedRecord];
      await appendOne(only.record).then(only.resolve, only.reject);
      return;
    }
    const rows = batch.map(({ record }) => postgresDialect.appendCall(record, JSON.stringify(record))[1]);
    const values = rows.map(() => `(${callColumnValues})`).join(", ");
    const sql = `INSERT INTO calls (${callColumns}) VALUES ${values} ON CONFLICT (ref) DO NOTHING`;
    try {
      // The texts as the store keeps them (see `storedText`), as a single append keeps them.
      await query(storedStatement([sql, rows.flat()]));
      for (const queued of batch) queued.resolve();
    } catch {
      for (const queued of batch) await appendOne(queued.record).then(queued.resolve, queued.reject);
    }
  };
  return (record) =>
    new Promise((resolve, reject) => {
      if (queue.length === 0) atTurnEnd(() => void flush());
      queue.push({ record, resolve, reject });
    });
}

/** Applies every migration above the database's version, once, however many nodes start at the same time. */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [migrationLock]);
    try {
      await client.query("CREATE TABLE IF NOT EXISTS promptgate_schema (version INTEGER NOT NULL)");
      const row = (await client.query<{ version: number }>("SELECT version FROM promptgate_schema")).rows[0];
      const current = row?.version ?? 0;
      if (current > postgresSchemaVersion) throw new NewerPostgresSchemaError(current);
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        await client.query("BEGIN");
        try {
          await client.query(migration.sql);
          await client.query("DELETE FROM promptgate_schema");
          await client.query("INSERT INTO promptgate_schema (version) VALUES ($1)", [migration.version]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        }
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [migrationLock]);
    }
  } finally {
    client.release();
  }
}

/**
 * The gateway's durable state in PostgreSQL, shared by any number of gateway nodes: every write is one statement or
 * one transaction of a write and a read (READ COMMITTED, where a conditional UPDATE re-checks its condition on the
 * row it waited for), so a case freeze, a session's turn and a job's end have exactly one winner across nodes.
 * Opening connects, and migrates under an advisory lock; it refuses a database migrated by a newer promptgate.
 */
export async function postgresStore(options: PostgresOptions): Promise<Store & { reachable(): Promise<boolean> }> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    statement_timeout: options.statementTimeoutMs,
    connectionTimeoutMillis: 5_000,
    types,
  });
  // A connection the server drops while idle (a restart, a failover) is replaced on next use; its error is not fatal.
  pool.on("error", () => undefined);
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const query = async <Row>([sql, params]: SqlStatement): Promise<Row[]> =>
    (await pool.query({ text: textOf(sql), values: params as unknown[] })).rows as Row[];
  const executor: SqlExecutor = {
    async run(statement) {
      await query(statement);
    },
    async first<Row>(statement: SqlStatement) {
      return (await query<Row>(statement))[0];
    },
    all: query,
    async writeThenRead<Row>(write: SqlStatement, read: SqlStatement) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query({ text: textOf(write[0]), values: write[1] as unknown[] });
        const row = (await client.query({ text: textOf(read[0]), values: read[1] as unknown[] })).rows[0];
        await client.query("COMMIT");
        return row as Row | undefined;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async batch<Row>(statements: readonly SqlStatement[]) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const results: Row[][] = [];
        for (const [sql, params] of statements) {
          results.push((await client.query({ text: textOf(sql), values: params as unknown[] })).rows as Row[]);
        }
        await client.query("COMMIT");
        return results;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    // The protocol's parameter count is 16 bits.
    maxParameters: 65_535,
    close: () => pool.end(),
  };
  const store = sqlStore(executor, postgresDialect);
  return {
    ...store,
    appendCall: batchedAppends(query, store.appendCall),
    // One node sweeps at a time: the others find the lock taken and leave the work to it.
    async sweep(cutoffs) {
      const client = await pool.connect();
      try {
        const taken = await client.query<{ taken: boolean }>("SELECT pg_try_advisory_lock($1) AS taken", [sweepLock]);
        if (taken.rows[0]?.taken !== true) return;
        try {
          await store.sweep(cutoffs);
        } finally {
          await client.query("SELECT pg_advisory_unlock($1)", [sweepLock]);
        }
      } finally {
        client.release();
      }
    },
    // Under READ COMMITTED a rotation's UPDATE does not see a secret a concurrent rotation of the same key has just
    // added, which would then keep no end; locking the key's row first makes rotations of one key take turns.
    async rotateKey(id, secretSha256, graceUntil) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const execute = async (statement: SqlStatement) => {
          const [sql, params] = storedStatement(statement);
          return (await client.query({ text: textOf(sql), values: params as unknown[] })).rowCount ?? 0;
        };
        const [endGrace, addSecret] = keyRotationStatements(id, secretSha256, graceUntil);
        const known = (await execute(["SELECT id FROM named_keys WHERE id = ? FOR UPDATE", [id]])) > 0;
        if (known) {
          await execute(endGrace);
          await execute(addSecret);
        }
        await client.query("COMMIT");
        return known;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async reachable() {
      try {
        await pool.query("SELECT 1");
        return true;
      } catch {
        return false;
      }
    },
  };
}
