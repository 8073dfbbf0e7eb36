-- promptgate's state on PostgreSQL: the tables of migrations/0001 … 0006 (the SQLite and D1 dialect) as of schema
-- version 6, in one file, since no PostgreSQL database predates it. A later version adds a file here with its own
-- number, beside the SQLite one of the same number; src/runtime/node/postgres-store.ts applies every file numbered
-- above the database's version, in order, under an advisory lock, and keeps the version in `promptgate_schema`.
-- Times are epoch milliseconds (BIGINT); JSON is kept as text, as the other dialects keep it.
CREATE TABLE policy_versions (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
  invalid_answers INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (case_id, name)
);
CREATE TABLE cached_prefixes (
  name TEXT PRIMARY KEY,
  chars BIGINT NOT NULL,
  schema_hashes TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX cached_prefixes_by_expiry ON cached_prefixes (expires_at);
CREATE TABLE response_histories (
  id TEXT PRIMARY KEY,
  chars BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  output_known INTEGER NOT NULL DEFAULT 1 CHECK (output_known IN (0, 1)),
  session_id TEXT,
  previous_id TEXT,
  items TEXT,
  upstream_id TEXT
);
CREATE INDEX response_histories_by_expiry ON response_histories (expires_at);
-- A call record as JSON, with the fields `GET /promptgate/admin/calls` filters by written beside it (the other
-- dialects read them out of the JSON in generated columns; PostgreSQL's JSON types refuse some texts a record may
-- hold, such as the escape of a lone surrogate, and a record must never be lost for that).
CREATE TABLE calls (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  ref TEXT NOT NULL UNIQUE,
  case_id TEXT,
  time TEXT NOT NULL,
  record TEXT NOT NULL,
  decision TEXT,
  surface TEXT,
  error TEXT,
  policy TEXT,
  policy_name TEXT
);
CREATE INDEX calls_by_case ON calls (case_id, seq);
CREATE INDEX calls_by_decision ON calls (decision, seq);
CREATE INDEX calls_by_surface ON calls (surface, seq);
CREATE INDEX calls_by_error ON calls (error, seq) WHERE error IS NOT NULL;
CREATE INDEX calls_by_policy ON calls (policy, seq);
CREATE INDEX calls_by_policy_name ON calls (policy_name, seq);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  principal TEXT NOT NULL,
  model TEXT NOT NULL,
  reasoning TEXT,
  profile TEXT,
  policy TEXT NOT NULL,
  selection TEXT NOT NULL,
  held INTEGER NOT NULL CHECK (held IN (0, 1)),
  started_at BIGINT NOT NULL,
  last_turn_at BIGINT NOT NULL,
  turn_holder TEXT,
  turn_until BIGINT
);
CREATE TABLE secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  principal TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'in_progress', 'cancelling', 'completed', 'failed', 'cancelled')),
  policy TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  started_at BIGINT,
  ended_at BIGINT,
  heartbeat_at BIGINT NOT NULL,
  response TEXT NOT NULL,
  error TEXT
);
CREATE TABLE evidence (
  principal TEXT NOT NULL,
  id TEXT NOT NULL,
  text TEXT NOT NULL,
  page_chars INTEGER NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (principal, id)
);
CREATE TABLE source_indexes (
  principal TEXT NOT NULL,
  id TEXT NOT NULL,
  sources TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (principal, id)
);
