/**
 * Mention watches: a job re-read every so often. The watermark only moves forward (greatest), so
 * a pass that finishes late can never pull it back and re-admit old tweets as new.
 */
import type { Queryable } from './db.ts';

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

export async function getWatch(db: Queryable, jobId: string): Promise<WatchRow | null> {
  const { rows } = await db.query<Record<string, unknown>>(`SELECT ${COLUMNS} FROM watches WHERE job_id = $1::bigint`, [jobId]);
  return rows[0] ? toWatch(rows[0]) : null;
}

/** Enabled watches whose next pass is due at `now`, earliest first. */
export async function listDueWatches(db: Queryable, now: Date = new Date()): Promise<WatchRow[]> {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM watches WHERE enabled AND next_due_at <= $1 ORDER BY next_due_at`,
    [now.toISOString()],
  );
  return rows.map(toWatch);
}

export async function startWatchPass(db: Queryable, jobId: string, at: Date = new Date()): Promise<void> {
  await db.query(`UPDATE watches SET last_pass_started_at = $2 WHERE job_id = $1::bigint`, [jobId, at.toISOString()]);
}

/** Records a finished pass: moves the watermark forward only, schedules the next pass (or none). */
export async function finishWatchPass(
  db: Queryable,
  jobId: string,
  pass: { highWatermarkId: string | null; newCount: number; finishedAt?: Date },
): Promise<WatchRow | null> {
  const { rows } = await db.query<Record<string, unknown>>(
    `UPDATE watches SET
       high_watermark_id = greatest(high_watermark_id, $2::bigint),
       passes = passes + 1,
       last_pass_finished_at = $3,
       last_pass_new = $4,
       next_due_at = CASE WHEN every_seconds IS NULL THEN NULL ELSE $3::timestamptz + make_interval(secs => every_seconds) END
     WHERE job_id = $1::bigint
     RETURNING ${COLUMNS}`,
    [jobId, pass.highWatermarkId, (pass.finishedAt ?? new Date()).toISOString(), pass.newCount],
  );
  return rows[0] ? toWatch(rows[0]) : null;
}

export async function setWatchEnabled(db: Queryable, jobId: string, enabled: boolean): Promise<void> {
  await db.query(`UPDATE watches SET enabled = $2 WHERE job_id = $1::bigint`, [jobId, enabled]);
}
