/**
 * What reconcile and job control read and change: the runnable slices and remaining budgets that
 * Redis must hold, and pause / resume / cancel.
 */
import type { Pool, Queryable } from './db.ts';
import { withTransaction } from './db.ts';
import { lockJobAndSlices } from './job-runtime.ts';
import { isLiveJobStatus, JobStatus, LIVE_JOB_STATUSES, type JobPriority } from './states.ts';

export interface RunnableSlice {
  jobId: string;
  sliceId: string;
  priority: JobPriority;
}

/** Every slice that should be in the queue (Postgres is the record; Redis may have lost it). */
export async function runnableSlices(db: Queryable, jobId?: string): Promise<RunnableSlice[]> {
  const { rows } = await db.query<{ job_id: string; id: string; priority: JobPriority }>(
    `SELECT s.job_id::text, s.id::text, s.priority
       FROM job_slices s JOIN jobs j ON j.id = s.job_id
      WHERE s.status IN ('pending', 'running')
        AND j.status = ANY($2::text[])
        AND ($1::bigint IS NULL OR j.id = $1::bigint)
      ORDER BY s.id`,
    [jobId ?? null, LIVE_JOB_STATUSES],
  );
  return rows.map((r) => ({ jobId: r.job_id, sliceId: r.id, priority: r.priority }));
}

/**
 * Ends no roll-up recorded: slices a page commit ended (`done`, atomically with their last page)
 * whose walk died before its roll-up (finishSlice), while Redis lost the queue entry that would
 * have run the walk again to finish it. Two kinds: a watch pass not recorded on its watch
 * (`sliceId` set: finishSlice records it and rolls the job up), and a queued or running job with
 * nothing left to run (`sliceId` null: a roll-up ends it).
 */
export async function unrolledEnds(db: Queryable, jobId?: string): Promise<Array<{ jobId: string; sliceId: string | null }>> {
  const { rows } = await db.query<{ job_id: string; slice_id: string | null }>(
    `SELECT s.job_id::text, s.id::text AS slice_id
       FROM job_slices s JOIN watches w ON w.job_id = s.job_id JOIN jobs j ON j.id = s.job_id
      -- The one unrecorded pass is passes + 1 (startWatchPassIn): by equality, job_slices_pass_idx
      -- finds it, where '> passes' read every done slice of every watch (31 ms with a year of passes).
      WHERE s.status = 'done' AND (s.params->>'pass')::int = w.passes + 1
        AND j.status = ANY($2::text[]) AND ($1::bigint IS NULL OR j.id = $1::bigint)
     UNION ALL
     SELECT j.id::text, NULL
       FROM jobs j
      WHERE j.status IN ('queued', 'running') AND ($1::bigint IS NULL OR j.id = $1::bigint)
        AND EXISTS (SELECT 1 FROM job_slices s WHERE s.job_id = j.id)
        AND NOT EXISTS (SELECT 1 FROM job_slices s WHERE s.job_id = j.id AND s.status IN ('pending', 'running'))
     ORDER BY 2 NULLS LAST`,
    [jobId ?? null, LIVE_JOB_STATUSES],
  );
  return rows.map((r) => ({ jobId: r.job_id, sliceId: r.slice_id }));
}

/** Budgets to restore in Redis after a loss: what each job may still spend. */
export async function jobBudgets(db: Queryable): Promise<Array<{ jobId: string; remaining: number }>> {
  const { rows } = await db.query<{ id: string; remaining: string }>(
    `SELECT id::text, GREATEST(max_requests - requests_spent, 0)::text AS remaining FROM jobs
      WHERE max_requests IS NOT NULL AND status = ANY($1::text[])`,
    [LIVE_JOB_STATUSES],
  );
  return rows.map((r) => ({ jobId: r.id, remaining: Number(r.remaining) }));
}

/** pause / resume / cancel. Returns the job's new status and whether it has a watch, or null when nothing changed. */
export async function setJobControl(
  pool: Pool,
  jobId: string,
  action: 'pause' | 'resume' | 'cancel',
): Promise<{ status: JobStatus; watch: boolean } | null> {
  return withTransaction(pool, async (client) => {
    // The one lock order (commit-page.ts): slices before their job. A page commit holds its slice
    // and then wants the job row; taking the job first here would deadlock with it (40P01).
    await lockJobAndSlices(client, jobId);
    const { rows } = await client.query<{ status: JobStatus; every: number | null; is_watch: boolean; active: boolean }>(
      `SELECT j.status, w.every_seconds AS every, (w.job_id IS NOT NULL) AS is_watch,
              EXISTS (SELECT 1 FROM job_slices s WHERE s.job_id = j.id AND s.status IN ('pending', 'running')) AS active
         FROM jobs j LEFT JOIN watches w ON w.job_id = j.id WHERE j.id = $1::bigint FOR NO KEY UPDATE OF j`,
      [jobId],
    );
    const r = rows[0];
    if (!r) return null;
    const live = isLiveJobStatus(r.status);
    let next: JobStatus | null = null;
    if (action === 'pause' && live) next = JobStatus.PAUSED;
    // A watch with nothing left to walk waits for its next pass; one with slices to walk (its
    // history, a pass cut short by the pause) is queued until a worker takes one.
    if (action === 'resume' && r.status === JobStatus.PAUSED) next = r.every !== null && !r.active ? JobStatus.SCHEDULED : JobStatus.QUEUED;
    if (action === 'cancel' && (live || r.status === JobStatus.PAUSED)) next = JobStatus.CANCELLED;
    if (next === null) return null;
    await client.query(
      `UPDATE jobs SET status = $2, updated_at = now(), finished_at = CASE WHEN $2 = 'cancelled' THEN now() ELSE finished_at END
        WHERE id = $1::bigint`,
      [jobId, next],
    );
    if (r.is_watch) await client.query('UPDATE watches SET enabled = $2 WHERE job_id = $1::bigint', [jobId, action === 'resume']);
    if (action === 'cancel') {
      await client.query(
        `UPDATE job_slices SET status = 'cancelled', finished_at = now(), updated_at = now()
          WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
        [jobId],
      );
    } else if (action === 'pause') {
      // A slice caught mid-walk keeps its cursor; `running` would only mislead `status`.
      await client.query(
        `UPDATE job_slices SET status = 'pending', updated_at = now() WHERE job_id = $1::bigint AND status = 'running'`,
        [jobId],
      );
    }
    return { status: next, watch: r.is_watch };
  });
}
