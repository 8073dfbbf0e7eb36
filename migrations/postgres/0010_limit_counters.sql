-- Schema version 10: the counters of limits over time (src/store/limit-counters-sql.ts). A counter is one scope's
-- (a principal under a policy, or a key), one limit's, one window's (`bucket`, e.g. the UTC minute since the epoch):
-- `used` is what it holds, `cap` the cap of the latest charge to it. The CHECK is what makes a charge all or none:
-- a charge is one multi-row upsert, and a row it would push past its cap fails the whole statement (SQLSTATE 23514),
-- which PostgreSQL rolls back; the row locks of ON CONFLICT DO UPDATE make concurrent charges of one counter take
-- turns, each re-checking the CHECK on the row as the one before left it. A change without a cap raises `cap` with
-- `used`, so that it never fails the CHECK. The sweep deletes the counters past `expires_at` (epoch milliseconds).
CREATE TABLE limit_counters (
  scope TEXT NOT NULL,
  name TEXT NOT NULL,
  bucket BIGINT NOT NULL,
  used BIGINT NOT NULL,
  cap BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (scope, name, bucket),
  CONSTRAINT limit_counters_within_cap CHECK (used <= cap)
);
CREATE INDEX limit_counters_by_expiry ON limit_counters (expires_at);
