-- promptgate's state on D1: the tables of src/runtime/node/sqlite-store.ts (schema version 1).
-- Applied by `wrangler d1 migrations apply promptgate`, or by the worker on first use when wrangler's
-- `d1_migrations` ledger lacks it; IF NOT EXISTS throughout, for databases made before that ledger was kept.
-- seq gives a stable creation order (an INTEGER PRIMARY KEY survives VACUUM, a bare rowid does not).
CREATE TABLE IF NOT EXISTS policy_versions (
  seq INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  ref TEXT NOT NULL,
  source TEXT NOT NULL,
  policy TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS case_policies (
  case_id TEXT NOT NULL,
  name TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  PRIMARY KEY (case_id, name)
);
CREATE TABLE IF NOT EXISTS cached_prefixes (
  name TEXT PRIMARY KEY,
  chars INTEGER NOT NULL,
  schema_hashes TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS response_histories (
  id TEXT PRIMARY KEY,
  chars INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
  seq INTEGER PRIMARY KEY,
  ref TEXT NOT NULL UNIQUE,
  case_id TEXT,
  time TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_by_case ON calls (case_id, seq);
