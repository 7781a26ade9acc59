-- 0021: a job reopened after it ended counts the time it sat ended as held, not as run.
--
-- `audit --repair` puts a completed or failed job back to 'queued' (finished_at cleared). The ETA
-- counts from started_at less held_ms (0017), and held_ms held only pauses and quota parks, so a
-- search that ran an hour, sat completed for a day and was reopened for a one-day gap showed an
-- ETA of most of an hour for two minutes of work. Leaving completed, failed or cancelled now adds
-- the time since finished_at, as leaving a pause adds the time since held_since.
CREATE OR REPLACE FUNCTION harvest_job_held_time() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IN ('paused', 'paused_quota') THEN
    IF OLD.status NOT IN ('paused', 'paused_quota') THEN
      NEW.held_since := now();
    END IF;
  ELSIF OLD.status IN ('paused', 'paused_quota') THEN
    -- Only what the hold took of the time since the job started: the ETA counts from started_at,
    -- and a job paused before its first slice ran has not started yet.
    IF NEW.started_at IS NOT NULL THEN
      NEW.held_ms := OLD.held_ms + coalesce(greatest(0, (extract(epoch FROM
                       now() - greatest(OLD.held_since, NEW.started_at)) * 1000)::bigint), 0);
    END IF;
    NEW.held_since := NULL;
  END IF;
  -- Reopened (audit --repair): the time it sat ended, from finished_at, was not running time.
  IF OLD.status IN ('completed', 'failed', 'cancelled') AND NEW.status NOT IN ('completed', 'failed', 'cancelled')
     AND NEW.started_at IS NOT NULL AND OLD.finished_at IS NOT NULL THEN
    NEW.held_ms := NEW.held_ms + greatest(0, (extract(epoch FROM
                     now() - greatest(OLD.finished_at, NEW.started_at)) * 1000)::bigint);
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION harvest_job_held_time() IS 'Keeps jobs.held_ms and jobs.held_since on each change of status: pauses, quota parks and the time a reopened job sat ended.';
COMMENT ON COLUMN jobs.held_ms IS 'Milliseconds the job spent paused or parked for quota (statuses paused, paused_quota), holds that ended, plus the time it sat completed, failed or cancelled before a reopen (audit --repair); trigger jobs_held_time.';
