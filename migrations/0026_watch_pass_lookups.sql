-- 0026: a watch's pass slice and a job's earlier quarantined items found by index, not by scan.
--
-- Pass slices are never pruned (they are the record): a 5-minute watch adds 105,120 a year. The
-- tick (startWatchPassIn), the end of a pass (finishWatchPass) and every reconcile (unrolledEnds)
-- look for one pass of one job, and read all of the job's done slices to find it: measured with
-- one year of passes on one watch, 28, 21 and 31 ms, against 0.9, 0.4 and 0.9 ms with this index.
-- Not partial (WHERE params ? 'pass'), though only pass slices carry a number: the planner keeps
-- statistics on the expression of a full index only, and without them it walked the primary key.
CREATE INDEX job_slices_pass_idx ON job_slices (job_id, ((params->>'pass')::int));

-- insertQuarantine skips an item the job already quarantined from the same endpoint (a watch's
-- every pass re-reads its first page, bad items included). A job quarantining every item of a
-- large hydrate (a schema drift) must not rescan its own rows for every page.
CREATE INDEX quarantine_job_item_idx ON quarantine (job_id, endpoint, payload_hash);
