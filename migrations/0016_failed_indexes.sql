-- 0016: the dashboard's recent failures, every second, without reading every slice.
--
-- `recentFailures` (src/store/dashboard.ts) asks for the newest failed jobs and slices each tick
-- of every open dashboard. Without an index on the status, the newest 20 failed slices are found
-- by walking the whole primary key backwards when failures are rare (millions of slices in a
-- database of long backfills). Failed rows are few: partial indexes stay small.
CREATE INDEX job_slices_failed_idx ON job_slices (id) WHERE status = 'failed';
CREATE INDEX jobs_failed_idx ON jobs (id) WHERE status = 'failed';
