-- 0006: watches that never miss. A watch has an identity (kind, target, filters): every pass of
-- that identity, scheduled or one-shot, continues from the same watermark, which every watches row
-- of the identity carries. A pass cut short keeps the watermark and records the id range it left
-- unread in `gaps`. Each slice records why its walk ended, so `harvest audit` can tell, from
-- Postgres alone, which id ranges were walked to the service's end of results.
ALTER TABLE watches
  ADD COLUMN identity text,
  ADD COLUMN kind text NOT NULL DEFAULT 'mentions',
  ADD COLUMN floor_ms bigint,
  ADD COLUMN gaps jsonb NOT NULL DEFAULT '[]';
ALTER TABLE watches ALTER COLUMN handle DROP NOT NULL;
CREATE INDEX watches_identity_idx ON watches (identity) WHERE identity IS NOT NULL;
COMMENT ON COLUMN watches.identity IS 'kind + target + filters (canonical JSON): passes of one identity share a watermark.';
COMMENT ON COLUMN watches.kind IS 'Job kind watched (mentions, search, user, community...).';
COMMENT ON COLUMN watches.floor_ms IS 'Where a first pass reads back to (ms since epoch): --since, 7 days, or the backfill''s upper bound.';
COMMENT ON COLUMN watches.gaps IS 'Open gaps: id ranges a pass cut short left unread, [{afterId, beforeId, reason, pass, at}]; the next pass that reaches the watermark closes them.';

ALTER TABLE job_slices
  ADD COLUMN end_reason text CHECK (end_reason IS NULL OR end_reason IN
    ('end', 'bound', 'empty-pages', 'stale-pages', 'repeated-cursor', 'not-found', 'failed', 'budget', 'max-tweets'));
COMMENT ON COLUMN job_slices.end_reason IS 'Why the walk ended: end (the service ended it, no cursor), bound (reached its range''s end or the watermark), or why it stopped early (empty-pages, stale-pages: pages bringing no new id, repeated-cursor, not-found, failed, budget, max-tweets). Null: still walking, or recorded by an older version.';
