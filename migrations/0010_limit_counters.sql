-- Schema version 10: the counters of limits over time (src/store/limit-counters-sql.ts). A counter is one scope's
-- (a principal under a policy, or a key), one limit's, one window's (`bucket`, e.g. the UTC minute since the epoch):
-- `used` is what it holds, `cap` the cap of the latest charge to it. The CHECK is what makes a charge all or none:
-- a charge is one multi-row upsert, and a row it would push past its cap fails the whole statement, whose changes
-- SQLite (and D1) undo. A change without a cap raises `cap` with `used`, so that it never fails the CHECK.
-- The sweep deletes the counters past `expires_at` (epoch milliseconds), through their index.
CREATE TABLE IF NOT EXISTS limit_counters (
  scope TEXT NOT NULL,
  name TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  used INTEGER NOT NULL,
  cap INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (scope, name, bucket),
  CONSTRAINT limit_counters_within_cap CHECK (used <= cap)
);
CREATE INDEX IF NOT EXISTS limit_counters_by_expiry ON limit_counters (expires_at);
