-- Schema version 9: calls are attributed to the named key that made them. `GET /promptgate/admin/calls` filters by
-- the key's id and its team, and `GET /promptgate/admin/usage` sums a key's calls per UTC day: how many, how many
-- were refused (decision and error are listed since version 3), the provider check's conservative_total_chars of
-- those sent, and the tokens the provider reported. Those fields live in the record's JSON; generated columns read
-- them out (VIRTUAL, as in version 3: no rewrite of a table made by an older version, and rows written by a process
-- of that version are counted all the same). `sent_chars` is null unless the call was sent: decided `sent`, or failed
-- or cancelled after the provider answered (src/store/call-usage.ts says the same for the other stores).
-- Calls without a named key are most calls of many gateways: only those with one are indexed. The listing indexes
-- end in seq (see version 3); the usage indexes lead with the key, the team or nothing, then time, so a range of
-- days is read from them alone.
-- ADD COLUMN cannot say IF NOT EXISTS: this file runs exactly once, under `PRAGMA user_version` on Node
-- and the `d1_migrations` ledger on D1 (src/runtime/workers/d1-store.ts).
ALTER TABLE calls ADD COLUMN key_id TEXT GENERATED ALWAYS AS (json_extract(record, '$.key.id')) VIRTUAL;
ALTER TABLE calls ADD COLUMN team TEXT GENERATED ALWAYS AS (json_extract(record, '$.key.team')) VIRTUAL;
ALTER TABLE calls ADD COLUMN sent_chars INTEGER GENERATED ALWAYS AS (
  CASE WHEN decision = 'sent'
    OR (decision IN ('failed', 'cancelled') AND json_extract(record, '$.upstream_status') IS NOT NULL)
  THEN json_extract(record, '$.provider_check.conservative_total_chars') END
) VIRTUAL;
ALTER TABLE calls ADD COLUMN tokens_in INTEGER GENERATED ALWAYS AS (json_extract(record, '$.usage.input_tokens')) VIRTUAL;
ALTER TABLE calls ADD COLUMN tokens_out INTEGER GENERATED ALWAYS AS (json_extract(record, '$.usage.output_tokens')) VIRTUAL;
CREATE INDEX IF NOT EXISTS calls_by_key ON calls (key_id, seq) WHERE key_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS calls_by_team ON calls (team, seq) WHERE team IS NOT NULL;
CREATE INDEX IF NOT EXISTS calls_usage_by_key ON calls (key_id, time) WHERE key_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS calls_usage_by_team ON calls (team, time) WHERE team IS NOT NULL;
CREATE INDEX IF NOT EXISTS calls_usage_by_time ON calls (time) WHERE key_id IS NOT NULL;
