-- 0015: a walk the service ended with an empty page after pages with items.
--
-- The service has had outages where every endpoint answered empty (service-notes). An empty page
-- without a cursor reads as the end of the results; after pages with items it is not trusted as
-- one: the walk ends 'empty-end', which `harvest audit` lists as not complete (and --repair reads
-- again), and a watch pass of a kind the service does not bound keeps its watermark.
ALTER TABLE job_slices DROP CONSTRAINT job_slices_end_reason_check;
ALTER TABLE job_slices ADD CONSTRAINT job_slices_end_reason_check CHECK (end_reason IS NULL OR end_reason IN
  ('end', 'empty-end', 'bound', 'empty-pages', 'stale-pages', 'repeated-cursor', 'not-found', 'failed', 'budget', 'max-tweets'));
COMMENT ON COLUMN job_slices.end_reason IS 'Why the walk ended: end (the service ended it, no cursor), bound (reached its range''s end or the watermark), or why it stopped early (empty-end: the service ended it with an empty page after pages with items, as an outage answers; empty-pages, stale-pages: pages bringing no new id, repeated-cursor, not-found, failed, budget, max-tweets). Null: still walking, or recorded by an older version.';
