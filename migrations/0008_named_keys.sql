-- Schema version 8: named keys made through the admin API or the CLI. A key keeps its settings as JSON (`name`,
-- `team`, `policies`, `models`, `credentials`, `limits`; `team` and `limits` null when not given) beside its times;
-- `seq` gives the order keys were made in. `key_secrets` holds the SHA-256 (lowercase hex) of every secret that
-- opens a key, never a secret itself: the current one without an end (`valid_until` NULL), earlier ones until the
-- end of the grace a rotation gave them (epoch milliseconds).
CREATE TABLE IF NOT EXISTS named_keys (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  settings TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER,
  last_used_at INTEGER
);
CREATE TABLE IF NOT EXISTS key_secrets (
  sha256 TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  valid_until INTEGER
);
CREATE INDEX IF NOT EXISTS key_secrets_by_key ON key_secrets (key_id);
