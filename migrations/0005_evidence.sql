-- Schema version 5: the window toolkit's evidence store. A controller keeps a large result under its own
-- id, per principal (the keyed hash of its credential), and recalls one page of it at a time; `text` is the result's
-- compact JSON, paged at `page_chars` code points. Rows past `expires_at` are treated as absent.
CREATE TABLE IF NOT EXISTS evidence (
  principal TEXT NOT NULL,
  id TEXT NOT NULL,
  text TEXT NOT NULL,
  page_chars INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (principal, id)
);
