-- 0027: a tweet the service stopped returning by id. A scheduled refresh (`harvest refresh --every`)
-- asked again, every pass, for the tweets a lookup by id no longer returned (deleted, or its
-- account protected or suspended), each a paid slot of a 100-id request: a week of passes every
-- 6 h asked 28 times. A lookup that does not return a stored tweet now stamps it, and a refresh
-- leaves it out until the tweet is seen again (last_seen_at after the stamp).
ALTER TABLE tweets ADD COLUMN not_returned_at timestamptz;

COMMENT ON COLUMN tweets.not_returned_at IS
  'When a lookup by id (hydrate, refresh) last asked for this tweet and the service did not return it (deleted, protected, suspended); null if never. Later than last_seen_at: gone since; a refresh no longer asks for it.';
