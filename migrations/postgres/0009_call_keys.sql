-- Schema version 9: calls are attributed to the named key that made them. `GET /promptgate/admin/calls` filters by
-- the key's id and its team, and `GET /promptgate/admin/usage` sums a key's calls per UTC day: how many, how many
-- were refused (decision and error are written since version 6), the provider check's conservative_total_chars of
-- those sent, and the tokens the provider reported. As the other listed fields, they are written beside the record
-- (src/runtime/node/postgres-store.ts; `sent_chars` null unless the call was sent, see src/store/call-usage.ts);
-- a record kept before this version is not counted here (its JSON, read as text, still names its key): a cast of
-- every kept record to JSON could refuse one and stop the migration.
-- Calls without a named key are most calls of many gateways: only those with one are indexed. The listing indexes
-- end in seq; the usage indexes lead with the key, the team or nothing, then time, so a range of days is read from
-- them alone.
ALTER TABLE calls ADD COLUMN key_id TEXT;
ALTER TABLE calls ADD COLUMN team TEXT;
ALTER TABLE calls ADD COLUMN sent_chars BIGINT;
ALTER TABLE calls ADD COLUMN tokens_in BIGINT;
ALTER TABLE calls ADD COLUMN tokens_out BIGINT;
CREATE INDEX calls_by_key ON calls (key_id, seq) WHERE key_id IS NOT NULL;
CREATE INDEX calls_by_team ON calls (team, seq) WHERE team IS NOT NULL;
CREATE INDEX calls_usage_by_key ON calls (key_id, time) WHERE key_id IS NOT NULL;
CREATE INDEX calls_usage_by_team ON calls (team, time) WHERE team IS NOT NULL;
CREATE INDEX calls_usage_by_time ON calls (time) WHERE key_id IS NOT NULL;
