-- 0012: each slice has its own priority.
--
-- Until now a slice ran at its job's priority, so a job mixed two kinds of work under one: a
-- `mentions --since --every` job's history backfill ran at watch priority (ahead of every other
-- backfill, in the watch reserve of the keys' quota), and a search, user or community watch's
-- passes ran as backfill (behind every backfill's pages, outside the reserve). The queue a slice
-- is put on and the limiter's mode for its requests now come from the slice: a watch's pass down
-- to its watermark or a recent floor is watch work, any other walk backfill work
-- (src/store/jobs.ts, slicePriority).
--
-- Slices that exist keep their job's priority: they may be queued on that job's queue already,
-- and reconcile puts a slice on the queue its priority names. A slice inserted without one (by
-- hand, a script) takes its job's too. Workers of the version before must be stopped before
-- workers of this one start: their reconcile would queue a slice on its job's queue as well.
ALTER TABLE job_slices ADD COLUMN priority text;
UPDATE job_slices s SET priority = j.priority FROM jobs j WHERE j.id = s.job_id;
ALTER TABLE job_slices
  ALTER COLUMN priority SET NOT NULL,
  ADD CONSTRAINT job_slices_priority_check CHECK (priority IN ('watch', 'backfill'));
COMMENT ON COLUMN job_slices.priority IS
  'watch: a watch''s pass down to its watermark or a recent floor; backfill: any other walk. The queue the slice runs from and the limiter mode of its requests.';

CREATE FUNCTION harvest_slice_priority_default() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  SELECT priority INTO NEW.priority FROM jobs WHERE id = NEW.job_id;
  RETURN NEW;
END
$$;
COMMENT ON FUNCTION harvest_slice_priority_default() IS
  'Gives a slice inserted without a priority its job''s (what the version before 0012 queued every slice by).';
CREATE TRIGGER job_slices_priority_default BEFORE INSERT ON job_slices
  FOR EACH ROW WHEN (NEW.priority IS NULL) EXECUTE FUNCTION harvest_slice_priority_default();
