-- 0012: each slice has its own priority.
--
-- Until now a slice ran at its job's priority, so a job mixed two kinds of work under one: a
-- `mentions --since --every` job's history backfill ran at watch priority (ahead of every other
-- backfill, in the watch reserve of the keys' quota), and a search or community watch's passes
-- ran as backfill (behind every backfill's pages, outside the reserve). The queue a slice is put
-- on and the limiter's mode for its requests now come from the slice: a watch pass that reads on
-- from a watermark (what is new) is watch work; everything else, a watch's first pass reading back
-- to its floor included, is backfill work (src/store/jobs.ts, slicePriority).
--
-- Slices that exist keep their job's priority: they may be queued on that job's queue already,
-- and reconcile puts a slice on the queue its priority names. So does a slice inserted without
-- one (a worker of the version before, during a rolling upgrade, queues it on its job's queue).
ALTER TABLE job_slices ADD COLUMN priority text;
UPDATE job_slices s SET priority = j.priority FROM jobs j WHERE j.id = s.job_id;
ALTER TABLE job_slices
  ALTER COLUMN priority SET NOT NULL,
  ADD CONSTRAINT job_slices_priority_check CHECK (priority IN ('watch', 'backfill'));
COMMENT ON COLUMN job_slices.priority IS
  'watch: a watch pass reading on from its watermark; backfill: any other walk. The queue the slice runs from and the limiter mode of its requests.';

CREATE FUNCTION harvest_slice_priority_default() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  SELECT priority INTO NEW.priority FROM jobs WHERE id = NEW.job_id;
  RETURN NEW;
END
$$;
COMMENT ON FUNCTION harvest_slice_priority_default() IS
  'Gives a slice inserted without a priority its job''s (what the version before 0012 queued it by).';
CREATE TRIGGER job_slices_priority_default BEFORE INSERT ON job_slices
  FOR EACH ROW WHEN (NEW.priority IS NULL) EXECUTE FUNCTION harvest_slice_priority_default();
