-- Schema version 7: a cached prefix (a Gemini cached content created through the gateway) is kept with the
-- principal that created it (the keyed hash of its credential), as sessions, jobs and evidence are: under gateway
-- keys only that principal reaches it. A row kept before has the empty principal, which is no one's.
ALTER TABLE cached_prefixes ADD COLUMN principal TEXT NOT NULL DEFAULT '';
