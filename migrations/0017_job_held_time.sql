-- 0017: how long a job was held (paused, or parked for quota), so an ETA counts only the time it ran.
--
-- An ETA is elapsed × (1 − done) / done. Counted from started_at, a job resumed after a day
-- paused, or after two days parked for quota, showed an ETA of days for minutes of work left.
-- A trigger keeps the count on every change of status, wherever it is made (pause, resume, the
-- quota park and its re-check), so no caller can forget it.
ALTER TABLE jobs ADD COLUMN held_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN held_since timestamptz;
COMMENT ON COLUMN jobs.held_ms IS 'Milliseconds the job spent paused or parked for quota (statuses paused, paused_quota), holds that ended; trigger jobs_held_time.';
COMMENT ON COLUMN jobs.held_since IS 'When the current hold (paused, paused_quota) began; null while the job is not held.';

-- A job held now: its hold counts from its last update (the best record there is of when it began).
UPDATE jobs SET held_since = updated_at WHERE status IN ('paused', 'paused_quota');

CREATE FUNCTION harvest_job_held_time() RETURNS trigger LANGUAGE plpgsql AS $$
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
  RETURN NEW;
END $$;
COMMENT ON FUNCTION harvest_job_held_time() IS 'Keeps jobs.held_ms and jobs.held_since on each change of status.';

CREATE TRIGGER jobs_held_time BEFORE UPDATE OF status ON jobs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION harvest_job_held_time();
