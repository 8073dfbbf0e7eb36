-- Schema version 6: a case's count of invalid answers under each policy name it froze (the policy's
-- `[validation] max_invalid_per_case` refuses its calls past the cap until an admin resets it), and the window
-- toolkit's source indexes (seeds 003, 004): per principal, the source ids a call's answer may cite, as a JSON array.
ALTER TABLE case_policies ADD COLUMN invalid_answers INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS source_indexes (
  principal TEXT NOT NULL,
  id TEXT NOT NULL,
  sources TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (principal, id)
);
