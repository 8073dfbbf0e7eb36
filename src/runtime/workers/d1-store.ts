import type { Policy, PolicyVersion } from "../../policy/policy.js";
import type { CallRecord } from "../../record/call-record.js";
import type { CachedPrefixRecord, ResponseHistoryRecord, Store } from "../../store/store.js";

/** One migration of `migrations/`, split into its statements (see scripts/build-worker-assets.ts). */
export interface D1Migration {
  name: string;
  statements: string[];
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
 * The gateway's durable state in a D1 database: the tables and statements of the SQLite store on Node. D1 runs
 * one statement at a time per database and a batch as one transaction, so a case freeze (insert unless present,
 * then read) is exactly-once however many isolates race.
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

  return {
    async savePolicyVersion(version) {
      await (await database())
        .prepare(
          "INSERT INTO policy_versions (sha256, name, ref, source, policy) VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
        )
        .bind(version.sha256, version.policy.name, version.ref, version.source, JSON.stringify(version.policy))
        .run();
    },
    async listPolicyVersions() {
      const { results } = await (await database())
        .prepare("SELECT sha256, ref, source, policy FROM policy_versions ORDER BY seq")
        .all<PolicyVersionRow>();
      return results.map(
        (row): PolicyVersion => ({
          policy: JSON.parse(row.policy) as Policy,
          sha256: row.sha256,
          ref: row.ref,
          source: row.source,
        }),
      );
    },
    async freezeCasePolicy(caseId, name, sha256) {
      const d1 = await database();
      const [, frozen] = await d1.batch<{ sha256: string }>([
        d1
          .prepare(
            "INSERT INTO case_policies (case_id, name, sha256) VALUES (?, ?, ?) ON CONFLICT (case_id, name) DO NOTHING",
          )
          .bind(caseId, name, sha256),
        d1.prepare("SELECT sha256 FROM case_policies WHERE case_id = ? AND name = ?").bind(caseId, name),
      ]);
      const row = frozen?.results[0];
      if (row === undefined) throw new Error("A case policy freeze was not stored.");
      return row.sha256;
    },

    async putCachedPrefix(record) {
      await (await database())
        .prepare(
          `INSERT INTO cached_prefixes (name, chars, schema_hashes, expires_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (name) DO UPDATE SET
             chars = excluded.chars, schema_hashes = excluded.schema_hashes, expires_at = excluded.expires_at`,
        )
        .bind(record.name, record.chars, JSON.stringify(record.schemaHashes), record.expiresAt)
        .run();
    },
    async getCachedPrefix(name, now): Promise<CachedPrefixRecord | undefined> {
      const d1 = await database();
      const row = await d1
        .prepare("SELECT name, chars, schema_hashes, expires_at FROM cached_prefixes WHERE name = ?")
        .bind(name)
        .first<CachedPrefixRow>();
      if (row === null) return undefined;
      if (row.expires_at <= now) {
        // The expiry condition keeps a lazy delete from removing a record another writer has just renewed.
        await d1.prepare("DELETE FROM cached_prefixes WHERE name = ? AND expires_at <= ?").bind(name, now).run();
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
      await (await database())
        .prepare("UPDATE cached_prefixes SET expires_at = ? WHERE name = ?")
        .bind(expiresAt, name)
        .run();
    },
    async deleteCachedPrefix(name) {
      await (await database()).prepare("DELETE FROM cached_prefixes WHERE name = ?").bind(name).run();
    },

    async putResponseHistory(record) {
      await (await database())
        .prepare(
          `INSERT INTO response_histories (id, chars, expires_at) VALUES (?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET chars = excluded.chars, expires_at = excluded.expires_at`,
        )
        .bind(record.id, record.chars, record.expiresAt)
        .run();
    },
    async getResponseHistory(id, now): Promise<ResponseHistoryRecord | undefined> {
      const d1 = await database();
      const row = await d1
        .prepare("SELECT id, chars, expires_at FROM response_histories WHERE id = ?")
        .bind(id)
        .first<ResponseHistoryRow>();
      if (row === null) return undefined;
      if (row.expires_at <= now) {
        await d1.prepare("DELETE FROM response_histories WHERE id = ? AND expires_at <= ?").bind(id, now).run();
        return undefined;
      }
      return { id: row.id, chars: row.chars, expiresAt: row.expires_at };
    },

    async appendCall(record) {
      await (await database())
        .prepare("INSERT INTO calls (ref, case_id, time, record) VALUES (?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING")
        .bind(record.ref, record.case ?? null, record.time, JSON.stringify(record))
        .run();
    },
    async getCall(ref): Promise<CallRecord | undefined> {
      const row = await (await database())
        .prepare("SELECT record FROM calls WHERE ref = ?")
        .bind(ref)
        .first<{ record: string }>();
      return row === null ? undefined : (JSON.parse(row.record) as CallRecord);
    },
    async listCallsOfCase(caseId, limit): Promise<CallRecord[]> {
      const count = Math.max(0, Math.trunc(limit));
      const { results } = await (await database())
        .prepare("SELECT record FROM calls WHERE case_id = ? ORDER BY seq LIMIT ?")
        .bind(caseId, count)
        .all<{ record: string }>();
      return results.map((row) => JSON.parse(row.record) as CallRecord);
    },

    // The binding belongs to the isolate; there is nothing to close.
    async close() {},
  };
}
