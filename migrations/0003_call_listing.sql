-- Schema version 3: `GET /promptgate/admin/calls` lists the calls newest first (or a case's oldest first),
-- filtered by decision, policy, surface and error code, a page at a time. Those fields live in the
-- record's JSON; generated columns read them out (VIRTUAL: computed, not stored, so a table made by an
-- older version needs no rewrite and a process of that version sharing the file writes rows that are
-- listed all the same). Each index ends in seq, so that a filtered page is read in order from its
-- index and stops at its limit, however large the table.
-- ADD COLUMN cannot say IF NOT EXISTS: this file runs exactly once, under `PRAGMA user_version` on Node
-- and the `d1_migrations` ledger on D1 (src/runtime/workers/d1-store.ts).
ALTER TABLE calls ADD COLUMN decision TEXT GENERATED ALWAYS AS (json_extract(record, '$.decision')) VIRTUAL;
ALTER TABLE calls ADD COLUMN surface TEXT GENERATED ALWAYS AS (json_extract(record, '$.surface')) VIRTUAL;
ALTER TABLE calls ADD COLUMN error TEXT GENERATED ALWAYS AS (json_extract(record, '$.error')) VIRTUAL;
-- `name@` and 12 hex digits, as the record holds it; its name is what precedes the `@`.
ALTER TABLE calls ADD COLUMN policy TEXT GENERATED ALWAYS AS (json_extract(record, '$.policy')) VIRTUAL;
ALTER TABLE calls ADD COLUMN policy_name TEXT GENERATED ALWAYS AS (substr(policy, 1, instr(policy, '@') - 1)) VIRTUAL;
CREATE INDEX IF NOT EXISTS calls_by_decision ON calls (decision, seq);
CREATE INDEX IF NOT EXISTS calls_by_surface ON calls (surface, seq);
-- Most calls end without an error: only those with one are indexed.
CREATE INDEX IF NOT EXISTS calls_by_error ON calls (error, seq) WHERE error IS NOT NULL;
CREATE INDEX IF NOT EXISTS calls_by_policy ON calls (policy, seq);
CREATE INDEX IF NOT EXISTS calls_by_policy_name ON calls (policy_name, seq);
