-- Schema version 4: follow-up sessions over Responses `previous_response_id`, and answer jobs.
-- A session is named by its first response's id, belongs to the keyed hash of the credential that started it,
-- and keeps the settings its first turn fixed; `turn_holder`/`turn_until` let one turn of it run at a time across
-- processes (a hold that runs out frees the session when its holder died). A stored response says which session
-- it is a turn of, which response it continued, and, where the provider keeps no history (a model routed to another
-- provider), this turn's input and output items, from which a later turn is rebuilt.
-- `secrets` holds random keys made once per database (the key of principal hashes).
-- ADD COLUMN cannot say IF NOT EXISTS: this file runs exactly once, under `PRAGMA user_version` on Node and the
-- `d1_migrations` ledger on D1 (src/runtime/workers/d1-store.ts).
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  principal TEXT NOT NULL,
  model TEXT NOT NULL,
  reasoning TEXT,
  profile TEXT,
  policy TEXT NOT NULL,
  selection TEXT NOT NULL,
  held INTEGER NOT NULL CHECK (held IN (0, 1)),
  started_at INTEGER NOT NULL,
  last_turn_at INTEGER NOT NULL,
  turn_holder TEXT,
  turn_until INTEGER
);
CREATE TABLE IF NOT EXISTS secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
ALTER TABLE response_histories ADD COLUMN session_id TEXT;
ALTER TABLE response_histories ADD COLUMN previous_id TEXT;
ALTER TABLE response_histories ADD COLUMN items TEXT;
-- An answer job (`background: true` run by the gateway): its state and times, and its response object as JSON
-- (the queued one, then the answer); `error` holds a failed job's code, fixed message and ref as JSON.
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  principal TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'in_progress', 'cancelling', 'completed', 'failed', 'cancelled')),
  policy TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  heartbeat_at INTEGER NOT NULL,
  response TEXT NOT NULL,
  error TEXT
);
ALTER TABLE response_histories ADD COLUMN upstream_id TEXT;
