/**
 * Mention watches: a job re-read every so often. The watermark only moves forward (greatest), so
 * a pass that finishes late can never pull it back and re-admit old tweets as new.
 */
import type { Pool, Queryable } from './db.ts';
import { withTransaction } from './db.ts';
import { isLiveJobStatus, LIVE_JOB_STATUSES, type JobStatus } from './states.ts';

export interface WatchRow {
  jobId: string;
  handle: string;
  params: unknown;
  everySeconds: number | null;
  highWatermarkId: string | null;
  passes: number;
  nextDueAt: Date | null;
  lastPassStartedAt: Date | null;
  lastPassFinishedAt: Date | null;
  lastPassNew: number | null;
  enabled: boolean;
}

const COLUMNS = `job_id::text, handle, params, every_seconds, high_watermark_id::text, passes, next_due_at,
  last_pass_started_at, last_pass_finished_at, last_pass_new, enabled`;

function toWatch(r: Record<string, unknown>): WatchRow {
  return {
    jobId: r.job_id as string,
    handle: r.handle as string,
    params: r.params,
    everySeconds: r.every_seconds as number | null,
    highWatermarkId: r.high_watermark_id as string | null,
    passes: r.passes as number,
    nextDueAt: r.next_due_at as Date | null,
    lastPassStartedAt: r.last_pass_started_at as Date | null,
    lastPassFinishedAt: r.last_pass_finished_at as Date | null,
    lastPassNew: r.last_pass_new as number | null,
    enabled: r.enabled as boolean,
  };
}

export async function createWatch(
  db: Queryable,
  watch: { jobId: string; handle: string; params: unknown; everySeconds: number | null; nextDueAt?: Date | null },
): Promise<void> {
  await db.query(
    `INSERT INTO watches (job_id, handle, params, every_seconds, next_due_at) VALUES ($1::bigint, $2, $3::jsonb, $4, $5)`,
    [watch.jobId, watch.handle, JSON.stringify(watch.params ?? {}), watch.everySeconds, watch.nextDueAt?.toISOString() ?? new Date().toISOString()],
  );
}

/**
 * Records a finished pass: moves the watermark forward only, schedules the next pass (or none).
 * Idempotent per pass number, so recording the same pass twice (a roll-up re-run after a crash)
 * counts it once.
 */
export async function finishWatchPass(
  db: Queryable,
  jobId: string,
  pass: { pass: number; highWatermarkId: string | null; newCount: number; finishedAt?: Date },
): Promise<WatchRow | null> {
  const { rows } = await db.query<Record<string, unknown>>(
    `UPDATE watches SET
       high_watermark_id = greatest(high_watermark_id, $2::bigint),
       passes = greatest(passes, $5::int),
       last_pass_finished_at = $3,
       last_pass_new = $4,
       next_due_at = CASE WHEN every_seconds IS NULL THEN NULL ELSE $3::timestamptz + make_interval(secs => every_seconds) END
     WHERE job_id = $1::bigint
     RETURNING ${COLUMNS}`,
    [jobId, pass.highWatermarkId, (pass.finishedAt ?? new Date()).toISOString(), pass.newCount, pass.pass],
  );
  return rows[0] ? toWatch(rows[0]) : null;
}

export interface WatchForPass {
  jobId: string;
  jobKind: string;
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
      kind: string;
      params: unknown;
      enabled: boolean;
      high_watermark_id: string | null;
      passes: number;
      active: string | null;
    }>(
      `SELECT j.status, j.kind, j.params, w.enabled, w.high_watermark_id::text, w.passes,
              -- A pass is still active until the watch has recorded it: its last page may have
              -- committed (status done) before finishSlice moved the watermark.
              (SELECT id::text FROM job_slices
                WHERE job_id = j.id
                  AND (status IN ('pending', 'running')
                       OR (status = 'done' AND (params->>'pass')::int > w.passes))
                ORDER BY id LIMIT 1) AS active
         FROM watches w JOIN jobs j ON j.id = w.job_id
        WHERE w.job_id = $1::bigint`,
      [jobId],
    );
    const r = rows[0];
    if (!r || !r.enabled || !isLiveJobStatus(r.status)) return null;
    if (r.active) return { sliceId: r.active, started: false };
    const slice = makeSlice({
      jobId,
      jobKind: r.kind,
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

export interface ScheduledWatch {
  jobId: string;
  everySeconds: number;
}

export async function scheduledWatches(db: Queryable, jobId?: string): Promise<ScheduledWatch[]> {
  const { rows } = await db.query<{ job_id: string; every_seconds: number }>(
    `SELECT w.job_id::text, w.every_seconds FROM watches w JOIN jobs j ON j.id = w.job_id
      WHERE w.enabled AND w.every_seconds IS NOT NULL
        AND j.status = ANY($2::text[])
        AND ($1::bigint IS NULL OR j.id = $1::bigint)`,
    [jobId ?? null, LIVE_JOB_STATUSES],
  );
  return rows.map((r) => ({ jobId: r.job_id, everySeconds: r.every_seconds }));
}
