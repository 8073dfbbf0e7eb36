-- Schema version 2: a stored response's history says whether it includes the response's output.
-- A background response is stored while still queued; its output counts once the gateway has seen
-- it finished, and until then a follow-up turn is a prefix the gateway cannot measure.
-- Rows written before this version counted their output, as the gateway then did for every
-- response, hence the default; it also keeps a process of the previous version that shares the
-- database writing correct rows. ADD COLUMN cannot say IF NOT EXISTS: this file runs exactly once,
-- under `PRAGMA user_version` on Node and the `d1_migrations` ledger on D1 (src/runtime/workers/d1-store.ts).
ALTER TABLE response_histories ADD COLUMN output_known INTEGER NOT NULL DEFAULT 1 CHECK (output_known IN (0, 1));
