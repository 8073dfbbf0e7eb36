import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { Policy, PolicyVersion } from "../../policy/policy.js";
import type { CallRecord } from "../../record/call-record.js";
import type { CachedPrefixRecord, ResponseHistoryRecord, Store } from "../../store/store.js";

/** The schema this code reads and writes, kept in `PRAGMA user_version`. */
export const schemaVersion = 1;

/** `migrations[n]` takes a database from schema version n to n + 1. */
const migrations: readonly string[] = [
  `
  -- seq gives a stable creation order (an INTEGER PRIMARY KEY survives VACUUM, a bare rowid does not).
  CREATE TABLE policy_versions (
    seq INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    ref TEXT NOT NULL,
    source TEXT NOT NULL,
    policy TEXT NOT NULL
  );
  CREATE TABLE case_policies (
    case_id TEXT NOT NULL,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (case_id, name)
  );
  CREATE TABLE cached_prefixes (
    name TEXT PRIMARY KEY,
    chars INTEGER NOT NULL,
    schema_hashes TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE TABLE response_histories (
    id TEXT PRIMARY KEY,
    chars INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE TABLE calls (
    seq INTEGER PRIMARY KEY,
    ref TEXT NOT NULL UNIQUE,
    case_id TEXT,
    time TEXT NOT NULL,
    record TEXT NOT NULL
  );
  CREATE INDEX calls_by_case ON calls (case_id, seq);
  `,
];

/** How long a connection waits for another process's write lock before failing. */
const busyTimeoutMs = 5_000;

function readUserVersion(database: Database.Database): number {
  return Number(database.pragma("user_version", { simple: true }));
}

function newerSchemaError(path: string, stored: number): Error {
  return new Error(
    `The database ${path} has schema version ${stored}, newer than version ${schemaVersion} of this promptgate; refusing to open it.`,
  );
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

interface PolicyVersionRow {
  sha256: string;
  ref: string;
  source: string;
  policy: string;
}
interface CachedPrefixRow {
  name: string;
  chars: number;
  schema_hashes: string;
  expires_at: number;
}
interface ResponseHistoryRow {
  id: string;
  chars: number;
  expires_at: number;
}

/**
 * The gateway's durable state in one SQLite file (better-sqlite3, WAL). Several processes may share the file:
 * every write is a single statement or an IMMEDIATE transaction.
 */
export function sqliteStore(path: string): Store {
  const database = openDatabase(path);

  const insertPolicyVersion = database.prepare<[string, string, string, string, string]>(
    "INSERT INTO policy_versions (sha256, name, ref, source, policy) VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
  );
  const selectPolicyVersions = database.prepare<[], PolicyVersionRow>(
    "SELECT sha256, ref, source, policy FROM policy_versions ORDER BY seq",
  );
  const insertCasePolicy = database.prepare<[string, string, string]>(
    "INSERT INTO case_policies (case_id, name, sha256) VALUES (?, ?, ?) ON CONFLICT (case_id, name) DO NOTHING",
  );
  const selectCasePolicy = database.prepare<[string, string], { sha256: string }>(
    "SELECT sha256 FROM case_policies WHERE case_id = ? AND name = ?",
  );
  const upsertCachedPrefix = database.prepare<[string, number, string, number]>(
    `INSERT INTO cached_prefixes (name, chars, schema_hashes, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET
       chars = excluded.chars, schema_hashes = excluded.schema_hashes, expires_at = excluded.expires_at`,
  );
  const selectCachedPrefix = database.prepare<[string], CachedPrefixRow>(
    "SELECT name, chars, schema_hashes, expires_at FROM cached_prefixes WHERE name = ?",
  );
  const updateCachedPrefixExpiry = database.prepare<[number, string]>(
    "UPDATE cached_prefixes SET expires_at = ? WHERE name = ?",
  );
  const deleteCachedPrefix = database.prepare<[string]>("DELETE FROM cached_prefixes WHERE name = ?");
  // The expiry condition keeps a lazy delete from removing a record another writer has just renewed.
  const deleteExpiredCachedPrefix = database.prepare<[string, number]>(
    "DELETE FROM cached_prefixes WHERE name = ? AND expires_at <= ?",
  );
  const upsertResponseHistory = database.prepare<[string, number, number]>(
    `INSERT INTO response_histories (id, chars, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET chars = excluded.chars, expires_at = excluded.expires_at`,
  );
  const selectResponseHistory = database.prepare<[string], ResponseHistoryRow>(
    "SELECT id, chars, expires_at FROM response_histories WHERE id = ?",
  );
  const deleteExpiredResponseHistory = database.prepare<[string, number]>(
    "DELETE FROM response_histories WHERE id = ? AND expires_at <= ?",
  );
  const insertCall = database.prepare<[string, string | null, string, string]>(
    "INSERT INTO calls (ref, case_id, time, record) VALUES (?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING",
  );
  const selectCall = database.prepare<[string], { record: string }>("SELECT record FROM calls WHERE ref = ?");
  const selectCallsOfCase = database.prepare<[string, number], { record: string }>(
    "SELECT record FROM calls WHERE case_id = ? ORDER BY seq LIMIT ?",
  );

  // IMMEDIATE takes the write lock first, so the insert and the read see one state even across processes.
  const freeze = database.transaction((caseId: string, name: string, sha256: string): string => {
    insertCasePolicy.run(caseId, name, sha256);
    const frozen = selectCasePolicy.get(caseId, name);
    if (frozen === undefined) throw new Error("A case policy freeze was not stored.");
    return frozen.sha256;
  });

  return {
    async savePolicyVersion(version) {
      insertPolicyVersion.run(
        version.sha256,
        version.policy.name,
        version.ref,
        version.source,
        JSON.stringify(version.policy),
      );
    },
    async listPolicyVersions() {
      return selectPolicyVersions.all().map(
        (row): PolicyVersion => ({
          policy: JSON.parse(row.policy) as Policy,
          sha256: row.sha256,
          ref: row.ref,
          source: row.source,
        }),
      );
    },
    async freezeCasePolicy(caseId, name, sha256) {
      return freeze.immediate(caseId, name, sha256);
    },

    async putCachedPrefix(record) {
      upsertCachedPrefix.run(record.name, record.chars, JSON.stringify(record.schemaHashes), record.expiresAt);
    },
    async getCachedPrefix(name, now): Promise<CachedPrefixRecord | undefined> {
      const row = selectCachedPrefix.get(name);
      if (row === undefined) return undefined;
      if (row.expires_at <= now) {
        deleteExpiredCachedPrefix.run(name, now);
        return undefined;
      }
      return {
        name: row.name,
        chars: row.chars,
        schemaHashes: JSON.parse(row.schema_hashes) as string[],
        expiresAt: row.expires_at,
      };
    },
    async updateCachedPrefixExpiry(name, expiresAt) {
      updateCachedPrefixExpiry.run(expiresAt, name);
    },
    async deleteCachedPrefix(name) {
      deleteCachedPrefix.run(name);
    },

    async putResponseHistory(record) {
      upsertResponseHistory.run(record.id, record.chars, record.expiresAt);
    },
    async getResponseHistory(id, now): Promise<ResponseHistoryRecord | undefined> {
      const row = selectResponseHistory.get(id);
      if (row === undefined) return undefined;
      if (row.expires_at <= now) {
        deleteExpiredResponseHistory.run(id, now);
        return undefined;
      }
      return { id: row.id, chars: row.chars, expiresAt: row.expires_at };
    },

    async appendCall(record) {
      insertCall.run(record.ref, record.case ?? null, record.time, JSON.stringify(record));
    },
    async getCall(ref): Promise<CallRecord | undefined> {
      const row = selectCall.get(ref);
      return row === undefined ? undefined : (JSON.parse(row.record) as CallRecord);
    },
    async listCallsOfCase(caseId, limit): Promise<CallRecord[]> {
      const count = Math.max(0, Math.trunc(limit));
      return selectCallsOfCase.all(caseId, count).map((row) => JSON.parse(row.record) as CallRecord);
    },

    async close() {
      database.close();
    },
  };
}
