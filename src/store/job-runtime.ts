/**
 * The set-based state changes the slice runner makes between page commits: loading a slice to
 * run, finishing it with the job's roll-up, splitting a dense search slice, pausing, failing and
 * ending jobs, and starting watch passes. Each runs under the job row's lock where two slices of
 * one job could race (two slices finishing at once must not both miss "last one out").
 */
import type { Pool, PoolClient, Queryable } from './db.ts';
import { withTransaction } from './db.ts';

export type JobStatus = 'queued' | 'running' | 'paused' | 'paused_quota' | 'scheduled' | 'completed' | 'failed' | 'cancelled';
export type SliceStatus = 'pending' | 'running' | 'done' | 'failed' | 'split' | 'cancelled';

export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'paused_quota', 'scheduled'];

export interface SliceForRun {
  id: string;
  jobId: string;
  kind: string;
  params: unknown;
  status: SliceStatus;
  cursor: string | null;
  recentCursors: string[];
  pages: number;
  emptyPages: number;
  job: { kind: string; status: JobStatus; priority: 'watch' | 'backfill'; params: unknown; tweets: number };
}

interface SliceRow {
  id: string;
  job_id: string;
  kind: string;
  params: unknown;
  status: SliceStatus;
  cursor: string | null;
  recent_cursors: string[];
  pages: string;
  empty_pages: number;
  job_kind: string;
  job_status: JobStatus;
  priority: 'watch' | 'backfill';
  job_params: unknown;
  job_tweets: string;
}

export async function loadSliceForRun(db: Queryable, sliceId: string): Promise<SliceForRun | null> {
  const { rows } = await db.query<SliceRow>(
    `SELECT s.id::text, s.job_id::text, s.kind, s.params, s.status, s.cursor, s.recent_cursors, s.pages::text,
            s.empty_pages, j.kind AS job_kind, j.status AS job_status, j.priority, j.params AS job_params,
            j.tweets::text AS job_tweets
       FROM job_slices s JOIN jobs j ON j.id = s.job_id
      WHERE s.id = $1::bigint`,
    [sliceId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    jobId: r.job_id,
    kind: r.kind,
    params: r.params,
    status: r.status,
    cursor: r.cursor,
    recentCursors: r.recent_cursors,
    pages: Number(r.pages),
    emptyPages: r.empty_pages,
    job: { kind: r.job_kind, status: r.job_status, priority: r.priority, params: r.job_params, tweets: Number(r.job_tweets) },
  };
}

/** A slice starts walking: it and its job are marked running (a parked or queued job resumes). */
export async function markSliceRunning(db: Queryable, sliceId: string, jobId: string): Promise<void> {
  await db.query(
    `WITH s AS (
       UPDATE job_slices SET status = 'running', updated_at = now()
        WHERE id = $1::bigint AND status = 'pending')
     UPDATE jobs SET status = 'running', note = CASE WHEN status = 'paused_quota' THEN NULL ELSE note END,
            started_at = coalesce(started_at, now()), updated_at = now()
      WHERE id = $2::bigint AND status IN ('queued', 'paused_quota', 'scheduled')`,
    [sliceId, jobId],
  );
}

export async function jobProgress(db: Queryable, jobId: string): Promise<{ status: JobStatus; tweets: number } | null> {
  const { rows } = await db.query<{ status: JobStatus; tweets: string }>(
    'SELECT status, tweets::text FROM jobs WHERE id = $1::bigint',
    [jobId],
  );
  const r = rows[0];
  return r ? { status: r.status, tweets: Number(r.tweets) } : null;
}

/** Merges keys into a slice's params (e.g. a watch pass's newest id so far). */
export async function patchSliceParams(db: Queryable, sliceId: string, patch: Record<string, unknown>): Promise<void> {
  await db.query('UPDATE job_slices SET params = params || $2::jsonb, updated_at = now() WHERE id = $1::bigint', [
    sliceId,
    JSON.stringify(patch),
  ]);
}

async function appendJobNote(db: Queryable, jobId: string, note: string | undefined): Promise<void> {
  if (!note) return;
  await db.query(
    `UPDATE jobs SET note = left(CASE WHEN note IS NULL OR note = '' THEN $2 ELSE note || '; ' || $2 END, 2000), updated_at = now()
      WHERE id = $1::bigint`,
    [jobId, note],
  );
}

/**
 * The job's status once no slice is active: a scheduled watch waits for its next pass, anything
 * else completes (or fails when a slice failed). Caller holds the job row lock.
 */
async function rollUp(client: PoolClient, jobId: string): Promise<JobStatus> {
  const { rows } = await client.query<{ status: JobStatus; active: string; failed: string; every: number | null; err: string | null; code: string | null }>(
    `SELECT j.status,
            (SELECT count(*) FROM job_slices WHERE job_id = j.id AND status IN ('pending', 'running'))::text AS active,
            (SELECT count(*) FROM job_slices WHERE job_id = j.id AND status = 'failed')::text AS failed,
            (SELECT every_seconds FROM watches WHERE job_id = j.id AND enabled) AS every,
            (SELECT error_message FROM job_slices WHERE job_id = j.id AND status = 'failed' ORDER BY id LIMIT 1) AS err,
            (SELECT error_code FROM job_slices WHERE job_id = j.id AND status = 'failed' ORDER BY id LIMIT 1) AS code
       FROM jobs j WHERE j.id = $1::bigint`,
    [jobId],
  );
  const r = rows[0];
  if (!r) return 'failed';
  if (Number(r.active) > 0 || !['queued', 'running', 'paused_quota', 'scheduled'].includes(r.status)) return r.status;
  let next: JobStatus;
  if (r.every !== null) next = 'scheduled';
  else next = Number(r.failed) > 0 ? 'failed' : 'completed';
  await client.query(
    `UPDATE jobs SET status = $2, updated_at = now(),
            finished_at = CASE WHEN $2 IN ('completed', 'failed') THEN now() ELSE finished_at END,
            error_code = CASE WHEN $2 = 'failed' THEN $3 ELSE error_code END,
            error_message = CASE WHEN $2 = 'failed' THEN $4 ELSE error_message END
      WHERE id = $1::bigint`,
    [jobId, next, r.code, r.err],
  );
  return next;
}

export interface FinishSlice {
  sliceId: string;
  jobId: string;
  status: 'done' | 'failed';
  note?: string;
  errorCode?: string;
  errorMessage?: string;
}

/**
 * Ends a slice and rolls its job up; a finished watch pass moves the watch's watermark. The last
 * page's commit may already have marked the slice done (atomically with its page): this step is
 * idempotent, so a crash between the two only means it runs again.
 */
export async function finishSlice(pool: Pool, f: FinishSlice): Promise<JobStatus> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR UPDATE', [f.jobId]);
    const { rows } = await client.query<{ kind: string }>(
      `UPDATE job_slices SET status = $2, finished_at = coalesce(finished_at, now()), updated_at = now(),
              error_code = $3, error_message = $4
        WHERE id = $1::bigint AND status IN ('pending', 'running', 'done') RETURNING kind`,
      [f.sliceId, f.status, f.errorCode ?? null, f.errorMessage ?? null],
    );
    if (rows[0]?.kind === 'mentions') {
      await client.query(
        `UPDATE watches w
            SET high_watermark_id = GREATEST(w.high_watermark_id, s.newest_tweet_id, (s.params->>'passNewestId')::bigint),
                passes = GREATEST(w.passes, (s.params->>'pass')::int), last_pass_finished_at = now(), last_pass_new = s.new_items,
                next_due_at = CASE WHEN w.every_seconds IS NULL THEN NULL
                                   ELSE w.last_pass_started_at + make_interval(secs => w.every_seconds) END
           FROM job_slices s
          WHERE w.job_id = $1::bigint AND s.id = $2::bigint`,
        [f.jobId, f.sliceId],
      );
    }
    await appendJobNote(client, f.jobId, f.note);
    return rollUp(client, f.jobId);
  });
}

/**
 * Hands [child.sinceMs, stopBelowMs) of a walking search slice to a new slice: the walking one
 * ends on reaching stopBelowMs. Returns the new slice's id, or null when the slice is no longer
 * walking.
 */
export async function splitSlice(
  pool: Pool,
  s: { sliceId: string; jobId: string; stopBelowMs: number; childParams: Record<string, unknown> },
): Promise<string | null> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ kind: string }>(
      `UPDATE job_slices SET params = params || jsonb_build_object('stopBelowMs', $2::bigint), updated_at = now()
        WHERE id = $1::bigint AND status IN ('pending', 'running') RETURNING kind`,
      [s.sliceId, s.stopBelowMs],
    );
    const kind = rows[0]?.kind;
    if (!kind) return null;
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO job_slices (job_id, parent_id, kind, params) VALUES ($1::bigint, $2::bigint, $3, $4::jsonb) RETURNING id::text`,
      [s.jobId, s.sliceId, kind, JSON.stringify(s.childParams)],
    );
    return inserted.rows[0]!.id;
  });
}

export async function activeSliceCount(db: Queryable, jobId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
    [jobId],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function pauseJobForQuota(db: Queryable, jobId: string, note: string): Promise<void> {
  await db.query(
    `UPDATE jobs SET status = 'paused_quota', note = $2, updated_at = now()
      WHERE id = $1::bigint AND status IN ('queued', 'running', 'scheduled')`,
    [jobId, note],
  );
}

/** Fails a job at once (401, 400, 410): its other slices stop. */
export async function failJob(pool: Pool, jobId: string, errorCode: string, errorMessage: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query(
      `UPDATE job_slices SET status = 'cancelled', finished_at = now(), updated_at = now()
        WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
      [jobId],
    );
    await client.query('UPDATE watches SET enabled = false WHERE job_id = $1::bigint', [jobId]);
    await client.query(
      `UPDATE jobs SET status = 'failed', error_code = $2, error_message = $3, finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND status NOT IN ('completed', 'failed', 'cancelled')`,
      [jobId, errorCode, errorMessage],
    );
  });
}

/** Ends a job early but successfully (--max-tweets reached, --max-requests spent). */
export async function endJob(pool: Pool, jobId: string, note: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR UPDATE', [jobId]);
    await client.query(
      `UPDATE job_slices SET status = 'done', finished_at = now(), updated_at = now()
        WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
      [jobId],
    );
    await appendJobNote(client, jobId, note);
    await client.query(
      `UPDATE jobs SET status = 'completed', finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND status IN ('queued', 'running', 'paused_quota')`,
      [jobId],
    );
  });
}

export async function createWatch(
  db: Queryable,
  w: { jobId: string; handle: string; params: Record<string, unknown>; everySeconds: number | null },
): Promise<void> {
  await db.query(
    `INSERT INTO watches (job_id, handle, params, every_seconds, last_pass_started_at, next_due_at)
     VALUES ($1::bigint, $2, $3::jsonb, $4, now(), CASE WHEN $4::int IS NULL THEN NULL ELSE now() + make_interval(secs => $4::int) END)`,
    [w.jobId, w.handle, JSON.stringify(w.params), w.everySeconds],
  );
}

export interface WatchForPass {
  jobId: string;
  jobStatus: JobStatus;
  jobParams: unknown;
  enabled: boolean;
  watermarkId: string | null;
  passes: number;
  /** A pass slice that is still pending or running, if any. */
  activeSliceId: string | null;
}

/**
 * Starts a watch pass unless one is active (passes never overlap): under the watch row's lock,
 * `makeSlice` builds the pass's slice from the watermark; returns the slice to queue, or null.
 */
export async function startWatchPass(
  pool: Pool,
  jobId: string,
  makeSlice: (w: WatchForPass) => { kind: string; params: Record<string, unknown> },
): Promise<{ sliceId: string; started: boolean } | null> {
  return withTransaction(pool, async (client) => {
    // Lock first, then read in a new statement: in READ COMMITTED a statement that waited for the
    // lock still reads with its old snapshot and would miss the pass a concurrent tick just made.
    await client.query('SELECT 1 FROM watches WHERE job_id = $1::bigint FOR UPDATE', [jobId]);
    const { rows } = await client.query<{
      status: JobStatus;
      params: unknown;
      enabled: boolean;
      high_watermark_id: string | null;
      passes: number;
      active: string | null;
    }>(
      `SELECT j.status, j.params, w.enabled, w.high_watermark_id::text, w.passes,
              (SELECT id::text FROM job_slices WHERE job_id = j.id AND status IN ('pending', 'running') ORDER BY id LIMIT 1) AS active
         FROM watches w JOIN jobs j ON j.id = w.job_id
        WHERE w.job_id = $1::bigint`,
      [jobId],
    );
    const r = rows[0];
    if (!r || !r.enabled || !['scheduled', 'running', 'queued', 'paused_quota'].includes(r.status)) return null;
    if (r.active) return { sliceId: r.active, started: false };
    const slice = makeSlice({
      jobId,
      jobStatus: r.status,
      jobParams: r.params,
      enabled: r.enabled,
      watermarkId: r.high_watermark_id,
      passes: r.passes,
      activeSliceId: null,
    });
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO job_slices (job_id, kind, params) VALUES ($1::bigint, $2, $3::jsonb) RETURNING id::text`,
      [jobId, slice.kind, JSON.stringify(slice.params)],
    );
    await client.query(
      `UPDATE watches SET last_pass_started_at = now(),
              next_due_at = CASE WHEN every_seconds IS NULL THEN NULL ELSE now() + make_interval(secs => every_seconds) END
        WHERE job_id = $1::bigint`,
      [jobId],
    );
    await client.query(
      `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
        WHERE id = $1::bigint AND status IN ('scheduled', 'queued')`,
      [jobId],
    );
    return { sliceId: inserted.rows[0]!.id, started: true };
  });
}

export interface RunnableSlice {
  jobId: string;
  sliceId: string;
  priority: 'watch' | 'backfill';
}

/** Every slice that should be in the queue (Postgres is the record; Redis may have lost it). */
export async function runnableSlices(db: Queryable, jobId?: string): Promise<RunnableSlice[]> {
  const { rows } = await db.query<{ job_id: string; id: string; priority: 'watch' | 'backfill' }>(
    `SELECT s.job_id::text, s.id::text, j.priority
       FROM job_slices s JOIN jobs j ON j.id = s.job_id
      WHERE s.status IN ('pending', 'running')
        AND j.status IN ('queued', 'running', 'paused_quota', 'scheduled')
        AND ($1::bigint IS NULL OR j.id = $1::bigint)
      ORDER BY s.id`,
    [jobId ?? null],
  );
  return rows.map((r) => ({ jobId: r.job_id, sliceId: r.id, priority: r.priority }));
}

export interface ScheduledWatch {
  jobId: string;
  everySeconds: number;
}

export async function scheduledWatches(db: Queryable, jobId?: string): Promise<ScheduledWatch[]> {
  const { rows } = await db.query<{ job_id: string; every_seconds: number }>(
    `SELECT w.job_id::text, w.every_seconds FROM watches w JOIN jobs j ON j.id = w.job_id
      WHERE w.enabled AND w.every_seconds IS NOT NULL
        AND j.status IN ('queued', 'running', 'paused_quota', 'scheduled')
        AND ($1::bigint IS NULL OR j.id = $1::bigint)`,
    [jobId ?? null],
  );
  return rows.map((r) => ({ jobId: r.job_id, everySeconds: r.every_seconds }));
}

/** Budgets to restore in Redis after a loss: what each job may still spend. */
export async function jobBudgets(db: Queryable): Promise<Array<{ jobId: string; remaining: number }>> {
  const { rows } = await db.query<{ id: string; remaining: string }>(
    `SELECT id::text, GREATEST(max_requests - requests_spent, 0)::text AS remaining FROM jobs
      WHERE max_requests IS NOT NULL AND status IN ('queued', 'running', 'paused_quota', 'scheduled')`,
  );
  return rows.map((r) => ({ jobId: r.id, remaining: Number(r.remaining) }));
}

/** pause / resume / cancel. Returns the job's kind and priority, or null when nothing changed. */
export async function setJobControl(
  pool: Pool,
  jobId: string,
  action: 'pause' | 'resume' | 'cancel',
): Promise<{ status: JobStatus; priority: 'watch' | 'backfill'; watch: boolean } | null> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ status: JobStatus; priority: 'watch' | 'backfill'; every: number | null; is_watch: boolean }>(
      `SELECT j.status, j.priority, w.every_seconds AS every, (w.job_id IS NOT NULL) AS is_watch
         FROM jobs j LEFT JOIN watches w ON w.job_id = j.id WHERE j.id = $1::bigint FOR UPDATE OF j`,
      [jobId],
    );
    const r = rows[0];
    if (!r) return null;
    const live = ['queued', 'running', 'paused_quota', 'scheduled'];
    let next: JobStatus | null = null;
    if (action === 'pause' && live.includes(r.status)) next = 'paused';
    if (action === 'resume' && r.status === 'paused') next = r.every !== null ? 'scheduled' : 'queued';
    if (action === 'cancel' && (live.includes(r.status) || r.status === 'paused')) next = 'cancelled';
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
    return { status: next, priority: r.priority, watch: r.is_watch };
  });
}
