-- 0020: a history row only when counts really changed, whatever runs beside it. The engagement and
-- audience history (tweet_metrics, user_metrics) was written when a page's counts differed from
-- the stored row as the statement's snapshot saw it: two workers storing one tweet or account at
-- the same moment both saw the old counts, and each wrote a row with the same new ones. The upsert
-- now decides on the row it locked (ON CONFLICT DO UPDATE sees the latest committed version): it
-- stamps counts_changed_at when the counts it writes differ from that row's, and the history row
-- is written from what the upsert returns (src/store/upsert-tweets.ts, upsert-users.ts).
ALTER TABLE tweets ADD COLUMN counts_changed_at timestamptz;
ALTER TABLE users ADD COLUMN counts_changed_at timestamptz;

COMMENT ON COLUMN tweets.counts_changed_at IS 'When the stored counts last changed: the commit time of the page that changed them (or first stored the tweet, counts or not); null for a row unchanged since migration 0020.';
COMMENT ON COLUMN users.counts_changed_at IS 'When the stored counts last changed: the commit time of the page that changed them (or first stored the account, counts or not); null for a row unchanged since migration 0020.';
