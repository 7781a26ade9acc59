/**
 * How far a job got, as SELECT columns over a job row aliased `j`: its slices by status
 * (`slices`, jsonb), and for searches the planned range (`range_total`, ms, from the unsplit
 * slices) and what its slices did not walk (`range_left`): a search slice still walking has
 * [max(sinceMs, stopBelowMs), min(untilMs, oldest seen)) left; so has one that ended without
 * walking its range to the end (cancelled, failed, stopped early: its budget, --max-tweets, empty
 * or stale pages), less what top-level slices made after it cover (a repair's, which walk what it
 * left; a split's children never overlap their parent's remaining range), so a job shows how far
 * it got: a search cancelled at 10%, and one its budget stopped at 30%, read 100% walked when only
 * a cancelled or failed job counted stopped slices. It is a progress figure, not audit's: a parent
 * that walked a page or two past its hand-over point (a refill split) has that stretch counted
 * unwalked in its child. Stopped slices are weighed against the top-level ones only, so a job of
 * thousands of stopped children stays cheap to read. Slices without both bounds (a watch's first
 * pass) are not a range.
 * `harvest status` and the dashboard read progress through these same columns.
 */
import { SliceEndReason } from './slice-ends.ts';
import { TWITTER_EPOCH_MS } from './snowflake.ts';

export const JOB_PROGRESS_COLUMNS = `(SELECT jsonb_object_agg(status, n) FROM (SELECT status, count(*)::int AS n FROM job_slices
            WHERE job_id = j.id GROUP BY status) c) AS slices,
         (SELECT sum((s.params->>'untilMs')::float8 - (s.params->>'sinceMs')::float8) FROM job_slices s
           WHERE s.job_id = j.id AND s.kind = 'search' AND s.parent_id IS NULL AND s.params ? 'sinceMs' AND s.params ? 'untilMs') AS range_total,
         (WITH s AS (SELECT id, parent_id, status, end_reason, oldest_tweet_id, (params->>'sinceMs')::float8 AS since,
                            (params->>'untilMs')::float8 AS until, (params->>'stopBelowMs')::float8 AS stop_below
                       FROM job_slices WHERE job_id = j.id AND kind = 'search' AND params ? 'sinceMs' AND params ? 'untilMs'),
               w AS (SELECT id, status NOT IN ('pending', 'running') AS stopped,
                            GREATEST(since, coalesce(stop_below, '-infinity')) AS lo,
                            LEAST(until, coalesce(((oldest_tweet_id >> 22) + ${TWITTER_EPOCH_MS})::float8, 'infinity')) AS hi
                       FROM s
                      WHERE status IN ('pending', 'running', 'cancelled', 'failed')
                         OR (status = 'done' AND end_reason IS NOT NULL AND end_reason NOT IN ('${SliceEndReason.END}', '${SliceEndReason.BOUND}'))),
               r AS (SELECT id, since, until FROM s WHERE parent_id IS NULL)
          SELECT sum(GREATEST(0, (w.hi - w.lo) - CASE WHEN NOT w.stopped THEN 0 ELSE coalesce(
                   (SELECT sum(GREATEST(0, LEAST(w.hi, r.until) - GREATEST(w.lo, r.since))) FROM r WHERE r.id > w.id), 0) END))
            FROM w WHERE w.hi > w.lo) AS range_left`;

/** The columns above as a row returns them. */
export interface JobProgressRow {
  slices: Record<string, number> | null;
  range_total: number | null;
  range_left: number | null;
}

export interface JobProgress {
  /** Slices by state; a split slice counts as done (its range went on in its children). */
  slices: { pending: number; running: number; done: number; failed: number; cancelled: number };
  /** Share of a search's planned range walked (0..1); null for kinds without a time range. */
  fractionDone: number | null;
}

export function readJobProgress(r: JobProgressRow): JobProgress {
  const c = r.slices ?? {};
  const total = r.range_total ?? 0;
  return {
    slices: {
      pending: c.pending ?? 0,
      running: c.running ?? 0,
      done: (c.done ?? 0) + (c.split ?? 0),
      failed: c.failed ?? 0,
      cancelled: c.cancelled ?? 0,
    },
    fractionDone: total > 0 ? Math.min(1, Math.max(0, 1 - (r.range_left ?? 0) / total)) : null,
  };
}

/**
 * Milliseconds the job was held (paused, or parked for quota) since it started, the current hold
 * included (migration 0017), as a SELECT column over a job row aliased `j`: `held_ms`, text. A job
 * not started yet (null started_at) has held nothing that counts.
 */
export const HELD_MS_COLUMN = `(j.held_ms + CASE WHEN j.started_at IS NULL OR j.held_since IS NULL THEN 0
           ELSE greatest(0, (extract(epoch FROM now() - greatest(j.held_since, j.started_at)) * 1000)::bigint) END)::text AS held_ms`;

/**
 * Seconds left, if the rest goes as fast as what was done so far, counting only the time the job
 * ran (not while it was paused or parked for quota). Null while nothing is known: no share done
 * yet, or all of it.
 */
export function etaSeconds(s: { fractionDone: number | null; startedAt: Date; heldMs: number; now: Date }): number | null {
  const f = s.fractionDone;
  const ran = (s.now.getTime() - s.startedAt.getTime() - s.heldMs) / 1000;
  if (f === null || !(f > 0) || f >= 1 || ran <= 0) return null;
  return (ran * (1 - f)) / f;
}
