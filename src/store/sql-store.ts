import type { KeySettings, NamedKey } from "../keys/named-key.js";
import type { Policy, PolicyVersion } from "../policy/policy.js";
import type { CallRecord } from "../record/call-record.js";
import { callListingStatement } from "./call-listing-sql.js";
import { usageRowOf, usageStatement } from "./call-usage.js";
import {
  changeStatements,
  chargedValues,
  chargeStatements,
  counterReadStatements,
  isCapRefusal,
  mergedChanges,
  mergedCharges,
  orderedCounters,
} from "./limit-counters-sql.js";
import { randomSecret } from "./random-secret.js";
import type { SqlStatement, SqlValue } from "./sql-statement.js";
import type {
  CounterValue,
  JobRecord,
  JobState,
  ResponseHistoryRecord,
  SessionRecord,
  Store,
  UsageRow,
} from "./store.js";
import { rowOfStored, storedStatement } from "./stored-text.js";

/**
 * The little a SQLite-family database must offer for the store: better-sqlite3 on Node, D1 on
 * Workers. The tables are those of the files of `migrations/`, all applied.
 */
export interface SqlExecutor {
  run(statement: SqlStatement): Promise<void>;
  first<Row>(statement: SqlStatement): Promise<Row | undefined>;
  all<Row>(statement: SqlStatement): Promise<Row[]>;
  /** Runs `write`, then `read`, as one atomic step under the database's write lock; returns the read's first row. */
  writeThenRead<Row>(write: SqlStatement, read: SqlStatement): Promise<Row | undefined>;
  /**
   * Runs the statements now, in order, as one atomic step (one transaction): a statement that fails undoes them all
   * and its error is thrown. Returns each statement's rows.
   */
  batch<Row>(statements: readonly SqlStatement[]): Promise<Row[][]>;
  /** The most parameters one statement may bind: 100 on D1, far more on SQLite and PostgreSQL. */
  readonly maxParameters: number;
  close(): Promise<void>;
}

/**
 * What differs between the SQL engines the store runs on, in the few statements where it does. SQLite (and D1) read
 * a call's listed fields out of its JSON in generated columns; PostgreSQL cannot cast every record's text to JSON (a
 * lone surrogate's escape is refused), so the store writes them beside the record.
 */
export interface SqlDialect {
  /** The statement that appends a call record (`json`, its JSON text) unless one of its ref is kept. */
  appendCall(record: CallRecord, json: string): SqlStatement;
  /** A filter on a listing column that the planner must not pick that column's index for (see `callListingStatement`). */
  unindexed(column: string): string;
}

/** SQLite and D1: the listed fields are generated columns; a unary `+` keeps a column's index out of a plan. */
export const sqliteDialect: SqlDialect = {
  appendCall: (record, json) => [
    "INSERT INTO calls (ref, case_id, time, record) VALUES (?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING",
    [record.ref, record.case ?? null, record.time, json],
  ],
  unindexed: (column) => `+${column}`,
};

interface PolicyVersionRow {
  sha256: string;
  ref: string;
  source: string;
  policy: string;
}

interface CachedPrefixRow {
  name: string;
  principal: string;
  chars: number;
  schema_hashes: string;
  expires_at: number;
}

interface ResponseHistoryRow {
  id: string;
  chars: number;
  output_known: number;
  expires_at: number;
  session_id: string | null;
  previous_id: string | null;
  items: string | null;
  upstream_id: string | null;
}

interface JobRow {
  id: string;
  principal: string;
  state: JobState;
  policy: string;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  heartbeat_at: number;
  response: string;
  error: string | null;
}

const jobColumns = "id, principal, state, policy, created_at, started_at, ended_at, heartbeat_at, response, error";

function jobOf(row: JobRow): JobRecord {
  const record: JobRecord = {
    id: row.id,
    principal: row.principal,
    state: row.state,
    policy: row.policy,
    createdAt: row.created_at,
    heartbeatAt: row.heartbeat_at,
    response: JSON.parse(row.response),
  };
  if (row.started_at !== null) record.startedAt = row.started_at;
  if (row.ended_at !== null) record.endedAt = row.ended_at;
  if (row.error !== null) record.error = JSON.parse(row.error) as JobRecord["error"];
  return record;
}

interface SessionRow {
  id: string;
  principal: string;
  model: string;
  reasoning: string | null;
  profile: string | null;
  policy: string;
  selection: string;
  held: number;
  started_at: number;
  last_turn_at: number;
}

function historyOf(row: ResponseHistoryRow): ResponseHistoryRecord {
  const record: ResponseHistoryRecord = {
    id: row.id,
    chars: row.chars,
    outputKnown: row.output_known === 1,
    expiresAt: row.expires_at,
  };
  if (row.session_id !== null) record.session = row.session_id;
  if (row.previous_id !== null) record.previous = row.previous_id;
  if (row.items !== null) record.items = JSON.parse(row.items) as unknown[];
  if (row.upstream_id !== null) record.upstream = row.upstream_id;
  return record;
}

function sessionOf(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    principal: row.principal,
    model: row.model,
    reasoning: row.reasoning ?? undefined,
    profile: row.profile ?? undefined,
    policy: row.policy,
    selection: row.selection,
    held: row.held === 1,
    startedAt: row.started_at,
    lastTurnAt: row.last_turn_at,
  };
}

interface NamedKeyRow {
  id: string;
  settings: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

const namedKeyColumns = "id, settings, created_at, expires_at, revoked_at, last_used_at";

/** A key's settings as kept in its `settings` column: JSON, with null for a team or limits not given. */
interface StoredKeySettings {
  name: string;
  team: string | null;
  policies: string[];
  models: string[];
  credentials: Record<string, string>;
  limits: Record<string, unknown> | null;
}

/** The JSON text of a key's settings but its expiry, which has a column of its own. */
function keySettingsText(settings: KeySettings): string {
  const stored: StoredKeySettings = {
    name: settings.name,
    team: settings.team ?? null,
    policies: [...settings.policies],
    models: [...settings.models],
    credentials: { ...settings.credentials },
    limits: settings.limits === undefined ? null : { ...settings.limits },
  };
  return JSON.stringify(stored);
}

function namedKeyOf(row: NamedKeyRow): NamedKey {
  const settings = JSON.parse(row.settings) as StoredKeySettings;
  return {
    id: row.id,
    name: settings.name,
    team: settings.team ?? undefined,
    policies: settings.policies,
    models: settings.models,
    credentials: settings.credentials,
    limits: settings.limits ?? undefined,
    createdAt: row.created_at,
    expiresAt: row.expires_at ?? undefined,
    revokedAt: row.revoked_at ?? undefined,
    lastUsedAt: row.last_used_at ?? undefined,
    source: "api",
  };
}

/**
 * The two statements of a key's rotation, to be run in this order as one atomic step: the first ends the grace of
 * every secret the key has (keeping an earlier end), the second adds the new secret, without an end, and returns the
 * key's id, or no row when the key is unknown. A store whose engine lets a concurrent rotation of the same key
 * interleave with them (PostgreSQL) locks the key's row first.
 */
export function keyRotationStatements(
  id: string,
  secretSha256: string,
  graceUntil: number,
): [SqlStatement, SqlStatement] {
  return [
    [
      `UPDATE key_secrets SET valid_until = CASE WHEN valid_until IS NULL OR valid_until > ? THEN ? ELSE valid_until END
       WHERE key_id = ?`,
      [graceUntil, graceUntil, id],
    ],
    [
      "INSERT INTO key_secrets (sha256, key_id) SELECT ?, id FROM named_keys WHERE id = ? RETURNING key_id",
      [secretSha256, id],
    ],
  ];
}

/** The executor with every text written as `storedText` keeps it and read back as it was (see there). */
function withStoredTexts(database: SqlExecutor): SqlExecutor {
  return {
    run: (statement) => database.run(storedStatement(statement)),
    first: async <Row>(statement: SqlStatement) => rowOfStored(await database.first<Row>(storedStatement(statement))),
    all: async <Row>(statement: SqlStatement) =>
      (await database.all<Row>(storedStatement(statement))).map((row) => rowOfStored(row)),
    writeThenRead: async <Row>(write: SqlStatement, read: SqlStatement) =>
      rowOfStored(await database.writeThenRead<Row>(storedStatement(write), storedStatement(read))),
    batch: async <Row>(statements: readonly SqlStatement[]) =>
      (await database.batch<Row>(statements.map(storedStatement))).map((rows) => rows.map((row) => rowOfStored(row))),
    maxParameters: database.maxParameters,
    close: () => database.close(),
  };
}

/**
 * The gateway's durable state on a SQLite-family database. Every write is one statement or one
 * atomic write-then-read, so several processes or isolates may share the database: a case
 * freeze (insert unless present, then read) is exactly-once however many race. Expired
 * prefixes are treated as absent and deleted lazily; the delete re-checks the expiry so it
 * never removes a record another writer has just renewed. Any text a client sent (a model name, an id) is kept
 * whatever characters it holds, U+0000 and lone surrogates included (see `storedText`).
 */
export function sqlStore(executor: SqlExecutor, dialect: SqlDialect = sqliteDialect): Store {
  const database = withStoredTexts(executor);
  return {
    async savePolicyVersion(version) {
      await database.run([
        "INSERT INTO policy_versions (sha256, name, ref, source, policy) VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
        [version.sha256, version.policy.name, version.ref, version.source, JSON.stringify(version.policy)],
      ]);
    },
    async listPolicyVersions() {
      const rows = await database.all<PolicyVersionRow>([
        "SELECT sha256, ref, source, policy FROM policy_versions ORDER BY seq",
        [],
      ]);
      return rows.map(
        (row): PolicyVersion => ({
          policy: JSON.parse(row.policy) as Policy,
          sha256: row.sha256,
          ref: row.ref,
          source: row.source,
        }),
      );
    },
    async freezeCasePolicy(caseId, name, sha256) {
      const frozen = await database.writeThenRead<{ sha256: string; invalid_answers: number }>(
        [
          "INSERT INTO case_policies (case_id, name, sha256) VALUES (?, ?, ?) ON CONFLICT (case_id, name) DO NOTHING",
          [caseId, name, sha256],
        ],
        ["SELECT sha256, invalid_answers FROM case_policies WHERE case_id = ? AND name = ?", [caseId, name]],
      );
      if (frozen === undefined) throw new Error("A case policy freeze was not stored.");
      return { name, sha256: frozen.sha256, invalidAnswers: frozen.invalid_answers };
    },
    async addInvalidAnswer(caseId, name) {
      await database.run([
        "UPDATE case_policies SET invalid_answers = invalid_answers + 1 WHERE case_id = ? AND name = ?",
        [caseId, name],
      ]);
    },
    async listCaseFreezes(caseId) {
      const rows = await database.all<{ name: string; sha256: string; invalid_answers: number }>([
        "SELECT name, sha256, invalid_answers FROM case_policies WHERE case_id = ? ORDER BY name",
        [caseId],
      ]);
      return rows.map((row) => ({ name: row.name, sha256: row.sha256, invalidAnswers: row.invalid_answers }));
    },
    async resetInvalidAnswers(caseId) {
      await database.run(["UPDATE case_policies SET invalid_answers = 0 WHERE case_id = ?", [caseId]]);
    },

    async putCachedPrefix(record) {
      await database.run([
        `INSERT INTO cached_prefixes (name, principal, chars, schema_hashes, expires_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET principal = excluded.principal,
           chars = excluded.chars, schema_hashes = excluded.schema_hashes, expires_at = excluded.expires_at`,
        [record.name, record.principal, record.chars, JSON.stringify(record.schemaHashes), record.expiresAt],
      ]);
    },
    async getCachedPrefix(name, now) {
      const row = await database.first<CachedPrefixRow>([
        "SELECT name, principal, chars, schema_hashes, expires_at FROM cached_prefixes WHERE name = ?",
        [name],
      ]);
      if (row === undefined) return undefined;
      if (row.expires_at <= now) {
        await database.run(["DELETE FROM cached_prefixes WHERE name = ? AND expires_at <= ?", [name, now]]);
        return undefined;
      }
      const schemaHashes = JSON.parse(row.schema_hashes) as string[];
      return { name: row.name, principal: row.principal, chars: row.chars, schemaHashes, expiresAt: row.expires_at };
    },
    async updateCachedPrefixExpiry(name, expiresAt) {
      await database.run(["UPDATE cached_prefixes SET expires_at = ? WHERE name = ?", [expiresAt, name]]);
    },
    async deleteCachedPrefix(name) {
      await database.run(["DELETE FROM cached_prefixes WHERE name = ?", [name]]);
    },

    async putResponseHistory(record) {
      await database.run([
        `INSERT INTO response_histories (id, chars, output_known, expires_at, session_id, previous_id, items, upstream_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET
           chars = excluded.chars, output_known = excluded.output_known, expires_at = excluded.expires_at,
           session_id = excluded.session_id, previous_id = excluded.previous_id, items = excluded.items,
           upstream_id = excluded.upstream_id`,
        [
          record.id,
          record.chars,
          record.outputKnown ? 1 : 0,
          record.expiresAt,
          record.session ?? null,
          record.previous ?? null,
          record.items === undefined ? null : JSON.stringify(record.items),
          record.upstream ?? null,
        ],
      ]);
    },
    async getResponseHistory(id, now) {
      const row = await database.first<ResponseHistoryRow>([
        `SELECT id, chars, output_known, expires_at, session_id, previous_id, items, upstream_id
         FROM response_histories WHERE id = ?`,
        [id],
      ]);
      if (row === undefined) return undefined;
      if (row.expires_at <= now) {
        await database.run(["DELETE FROM response_histories WHERE id = ? AND expires_at <= ?", [id, now]]);
        return undefined;
      }
      return historyOf(row);
    },
    async completeResponseHistory(id, outputChars) {
      // One statement, so two sightings of the finished response cannot both add its output.
      await database.run([
        "UPDATE response_histories SET chars = chars + ?, output_known = 1 WHERE id = ? AND output_known = 0",
        [outputChars, id],
      ]);
    },
    async deleteResponseHistory(id) {
      await database.run(["DELETE FROM response_histories WHERE id = ?", [id]]);
    },

    async putSession(record) {
      const kept = await database.writeThenRead<{ principal: string }>(
        [
          `INSERT INTO sessions (id, principal, model, reasoning, profile, policy, selection, held, started_at, last_turn_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
          [
            record.id,
            record.principal,
            record.model,
            record.reasoning ?? null,
            record.profile ?? null,
            record.policy,
            record.selection,
            record.held ? 1 : 0,
            record.startedAt,
            record.lastTurnAt,
          ],
        ],
        ["SELECT principal FROM sessions WHERE id = ?", [record.id]],
      );
      return kept?.principal === record.principal;
    },
    async getSession(id) {
      const row = await database.first<SessionRow>([
        `SELECT id, principal, model, reasoning, profile, policy, selection, held, started_at, last_turn_at
         FROM sessions WHERE id = ?`,
        [id],
      ]);
      return row === undefined ? undefined : sessionOf(row);
    },
    async touchSession(id, at) {
      await database.run(["UPDATE sessions SET last_turn_at = ? WHERE id = ? AND last_turn_at < ?", [at, id, at]]);
    },
    async claimSessionTurn(id, holder, until, now) {
      // One statement takes a free (or run-out) turn; the read then says who has it.
      const row = await database.writeThenRead<{ turn_holder: string | null }>(
        [
          `UPDATE sessions SET turn_holder = ?, turn_until = ?
           WHERE id = ? AND (turn_holder IS NULL OR turn_holder = ? OR turn_until <= ?)`,
          [holder, until, id, holder, now],
        ],
        ["SELECT turn_holder FROM sessions WHERE id = ?", [id]],
      );
      return row?.turn_holder === holder;
    },
    async releaseSessionTurn(id, holder) {
      await database.run([
        "UPDATE sessions SET turn_holder = NULL, turn_until = NULL WHERE id = ? AND turn_holder = ?",
        [id, holder],
      ]);
    },
    async putJob(record) {
      await database.run([
        `INSERT INTO jobs (${jobColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          record.id,
          record.principal,
          record.state,
          record.policy,
          record.createdAt,
          record.startedAt ?? null,
          record.endedAt ?? null,
          record.heartbeatAt,
          JSON.stringify(record.response),
          record.error === undefined ? null : JSON.stringify(record.error),
        ],
      ]);
    },
    async getJob(id) {
      const row = await database.first<JobRow>([`SELECT ${jobColumns} FROM jobs WHERE id = ?`, [id]]);
      return row === undefined ? undefined : jobOf(row);
    },
    async updateJob(id, from, update) {
      const sets = ["state = ?"];
      const values: SqlValue[] = [update.state];
      const columns: [keyof typeof update, string, (value: never) => SqlValue][] = [
        ["startedAt", "started_at", (value: number) => value],
        ["endedAt", "ended_at", (value: number) => value],
        ["heartbeatAt", "heartbeat_at", (value: number) => value],
        ["response", "response", (value: unknown) => JSON.stringify(value)],
        ["error", "error", (value: unknown) => JSON.stringify(value)],
      ];
      for (const [field, column, encode] of columns) {
        if (update[field] === undefined) continue;
        sets.push(`${column} = ?`);
        values.push(encode(update[field] as never));
      }
      const row = await database.writeThenRead<JobRow>(
        [
          `UPDATE jobs SET ${sets.join(", ")} WHERE id = ? AND state IN (${from.map(() => "?").join(", ")})`,
          [...values, id, ...from],
        ],
        [`SELECT ${jobColumns} FROM jobs WHERE id = ?`, [id]],
      );
      return row === undefined ? undefined : jobOf(row);
    },
    async beatJob(id, at) {
      await database.run(["UPDATE jobs SET heartbeat_at = ? WHERE id = ? AND heartbeat_at < ?", [at, id, at]]);
    },

    async putEvidence(record) {
      await database.run([
        `INSERT INTO evidence (principal, id, text, page_chars, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (principal, id) DO UPDATE SET
           text = excluded.text, page_chars = excluded.page_chars, created_at = excluded.created_at,
           expires_at = excluded.expires_at`,
        [record.principal, record.id, record.text, record.pageChars, record.createdAt, record.expiresAt],
      ]);
    },
    async getEvidence(principal, id, now) {
      const row = await database.first<{
        text: string;
        page_chars: number;
        created_at: number;
        expires_at: number;
      }>([
        "SELECT text, page_chars, created_at, expires_at FROM evidence WHERE principal = ? AND id = ?",
        [principal, id],
      ]);
      if (row === undefined || row.expires_at <= now) return undefined;
      return {
        principal,
        id,
        text: row.text,
        pageChars: row.page_chars,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      };
    },

    async evidenceUsage(principal, now, except) {
      const row = await database.first<{ count: number; chars: number | null }>([
        `SELECT COUNT(*) AS count, SUM(LENGTH(text)) AS chars FROM evidence
         WHERE principal = ? AND expires_at > ? AND id <> ?`,
        [principal, now, except],
      ]);
      return { count: row?.count ?? 0, chars: row?.chars ?? 0 };
    },
    async deleteEvidence(principal, id) {
      await database.run(["DELETE FROM evidence WHERE principal = ? AND id = ?", [principal, id]]);
    },

    async putSourceIndex(record) {
      await database.run([
        `INSERT INTO source_indexes (principal, id, sources, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (principal, id) DO UPDATE SET
           sources = excluded.sources, created_at = excluded.created_at, expires_at = excluded.expires_at`,
        [record.principal, record.id, JSON.stringify(record.sources), record.createdAt, record.expiresAt],
      ]);
    },
    async getSourceIndex(principal, id, now) {
      const row = await database.first<{ sources: string; created_at: number; expires_at: number }>([
        "SELECT sources, created_at, expires_at FROM source_indexes WHERE principal = ? AND id = ?",
        [principal, id],
      ]);
      if (row === undefined || row.expires_at <= now) return undefined;
      const sources = JSON.parse(row.sources) as string[];
      return { principal, id, sources, createdAt: row.created_at, expiresAt: row.expires_at };
    },
    async deleteSourceIndex(principal, id) {
      await database.run(["DELETE FROM source_indexes WHERE principal = ? AND id = ?", [principal, id]]);
    },
    async sourceIndexUsage(principal, now, except) {
      const row = await database.first<{ count: number; chars: number | null }>([
        `SELECT COUNT(*) AS count, SUM(LENGTH(sources)) AS chars FROM source_indexes
         WHERE principal = ? AND expires_at > ? AND id <> ?`,
        [principal, now, except],
      ]);
      return { count: row?.count ?? 0, chars: row?.chars ?? 0 };
    },
    async windowUsage(now, except) {
      // The entry a put replaces is left out of its own table only; "" is no principal's id, so it leaves out none.
      const [evidence, sources] = except.kind === "evidence" ? [except, undefined] : [undefined, except];
      const row = await database.first<{ count: number; chars: number | null }>([
        `SELECT COUNT(*) AS count, SUM(chars) AS chars FROM (
           SELECT LENGTH(text) AS chars FROM evidence WHERE expires_at > ? AND NOT (principal = ? AND id = ?)
           UNION ALL
           SELECT LENGTH(sources) AS chars FROM source_indexes WHERE expires_at > ? AND NOT (principal = ? AND id = ?)
         ) AS kept`,
        [now, evidence?.principal ?? "", evidence?.id ?? "", now, sources?.principal ?? "", sources?.id ?? ""],
      ]);
      return { count: row?.count ?? 0, chars: row?.chars ?? 0 };
    },

    async secret(name) {
      const row = await database.writeThenRead<{ value: string }>(
        ["INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", [name, randomSecret()]],
        ["SELECT value FROM secrets WHERE name = ?", [name]],
      );
      if (row === undefined) throw new Error("A store secret was not kept.");
      return row.value;
    },

    async putKey(key, secretSha256) {
      // The key and its secret in one atomic step, so that no key is ever kept without a secret.
      const kept = await database.writeThenRead<{ key_id: string }>(
        [
          `INSERT INTO named_keys (id, settings, created_at, expires_at, revoked_at, last_used_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
          [
            key.id,
            keySettingsText(key),
            key.createdAt,
            key.expiresAt ?? null,
            key.revokedAt ?? null,
            key.lastUsedAt ?? null,
          ],
        ],
        ["INSERT INTO key_secrets (sha256, key_id) VALUES (?, ?) RETURNING key_id", [secretSha256, key.id]],
      );
      if (kept === undefined) throw new Error("A key's secret was not kept.");
    },
    async getKey(id) {
      const row = await database.first<NamedKeyRow>([`SELECT ${namedKeyColumns} FROM named_keys WHERE id = ?`, [id]]);
      return row === undefined ? undefined : namedKeyOf(row);
    },
    async listKeys() {
      const rows = await database.all<NamedKeyRow>([`SELECT ${namedKeyColumns} FROM named_keys ORDER BY seq`, []]);
      return rows.map(namedKeyOf);
    },
    async keyOfSecret(secretSha256, now) {
      const row = await database.first<NamedKeyRow>([
        `SELECT k.id AS id, k.settings AS settings, k.created_at AS created_at, k.expires_at AS expires_at,
           k.revoked_at AS revoked_at, k.last_used_at AS last_used_at
         FROM key_secrets s JOIN named_keys k ON k.id = s.key_id
         WHERE s.sha256 = ? AND (s.valid_until IS NULL OR s.valid_until > ?)`,
        [secretSha256, now],
      ]);
      return row === undefined ? undefined : namedKeyOf(row);
    },
    async updateKey(id, settings) {
      const row = await database.writeThenRead<NamedKeyRow>(
        [
          "UPDATE named_keys SET settings = ?, expires_at = ? WHERE id = ?",
          [keySettingsText(settings), settings.expiresAt ?? null, id],
        ],
        [`SELECT ${namedKeyColumns} FROM named_keys WHERE id = ?`, [id]],
      );
      return row === undefined ? undefined : namedKeyOf(row);
    },
    async revokeKey(id, at) {
      const row = await database.writeThenRead<NamedKeyRow>(
        ["UPDATE named_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [at, id]],
        [`SELECT ${namedKeyColumns} FROM named_keys WHERE id = ?`, [id]],
      );
      return row === undefined ? undefined : namedKeyOf(row);
    },
    async rotateKey(id, secretSha256, graceUntil) {
      // SQLite and D1 run both statements under the database's write lock, so rotations of one key never interleave.
      const [endGrace, addSecret] = keyRotationStatements(id, secretSha256, graceUntil);
      return (await database.writeThenRead<{ key_id: string }>(endGrace, addSecret)) !== undefined;
    },
    async touchKey(id, at) {
      await database.run([
        "UPDATE named_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
        [at, id, at],
      ]);
    },

    async chargeCounters(charges) {
      const merged = mergedCharges(charges);
      if (merged.length === 0) return [];
      // Run now (a queued write could not say whether it was admitted), all or none (see limit-counters-sql.ts): one
      // statement where the engine binds enough parameters, else several in one transaction. Through `all`, which the
      // statement's RETURNING makes a read too.
      const statements = chargeStatements(merged, database.maxParameters);
      let rows: CounterValue[];
      try {
        rows =
          statements.length === 1
            ? await database.all<CounterValue>(statements[0] as SqlStatement)
            : (await database.batch<CounterValue>(statements)).flat();
      } catch (error) {
        if (isCapRefusal(error)) return undefined;
        throw error;
      }
      return chargedValues(charges, rows);
    },
    async changeCounters(changes) {
      for (const statement of changeStatements(mergedChanges(changes), database.maxParameters)) {
        await database.run(statement);
      }
    },
    async readCounters(ranges) {
      const found: CounterValue[] = [];
      for (const statement of counterReadStatements(ranges, database.maxParameters)) {
        found.push(...(await database.all<CounterValue>(statement)));
      }
      return orderedCounters(found).map(({ scope, name, bucket, used }) => ({ scope, name, bucket, used }));
    },

    async appendCall(record) {
      await database.run(dialect.appendCall(record, JSON.stringify(record)));
    },
    async getCall(ref) {
      const row = await database.first<{ record: string }>(["SELECT record FROM calls WHERE ref = ?", [ref]]);
      return row === undefined ? undefined : (JSON.parse(row.record) as CallRecord);
    },
    async listCallsOfCase(caseId, limit) {
      const count = Math.max(0, Math.trunc(limit));
      const rows = await database.all<{ record: string }>([
        "SELECT record FROM calls WHERE case_id = ? ORDER BY seq LIMIT ?",
        [caseId, count],
      ]);
      return rows.map((row) => JSON.parse(row.record) as CallRecord);
    },
    async listCalls(query) {
      let afterSeq: number | undefined;
      if (query.after !== undefined) {
        // A ref keeps its seq for good (records are never changed), so reading it apart from the page is safe.
        const row = await database.first<{ seq: number }>(["SELECT seq FROM calls WHERE ref = ?", [query.after]]);
        if (row === undefined) return undefined;
        afterSeq = row.seq;
      }
      const limit = Math.max(0, Math.trunc(query.limit));
      const statement = callListingStatement({ ...query, limit }, afterSeq, dialect.unindexed);
      const rows = await database.all<{ record: string }>(statement);
      return {
        calls: rows.slice(0, limit).map((row) => JSON.parse(row.record) as CallRecord),
        more: rows.length > limit,
      };
    },
    async usage(query) {
      return (await database.all<UsageRow>(usageStatement(query))).map(usageRowOf);
    },

    async sweep({ now, jobsEndedBefore, jobTombstonesEndedBefore, sessionsIdleSince }) {
      for (const table of ["cached_prefixes", "response_histories", "evidence", "source_indexes", "limit_counters"]) {
        await database.run([`DELETE FROM ${table} WHERE expires_at <= ?`, [now]]);
      }
      await database.run([
        "UPDATE jobs SET response = 'null', error = NULL WHERE ended_at < ? AND response <> 'null'",
        [jobsEndedBefore],
      ]);
      await database.run(["DELETE FROM jobs WHERE ended_at < ?", [jobTombstonesEndedBefore]]);
      await database.run([
        "DELETE FROM sessions WHERE last_turn_at < ? AND (turn_holder IS NULL OR turn_until <= ?)",
        [sessionsIdleSince, now],
      ]);
    },

    close: () => database.close(),
  };
}
