/**
 * Reads and writes of jobs, slices and watches that only tests need (src/store keeps what the
 * harvester itself calls). Column aliases give camelCase rows with no mapper to keep in step.
 */
import { getJob, type JobRow } from '../../src/store/jobs.ts';
import type { Queryable } from '../../src/store/db.ts';
import { TERMINAL_JOB_STATUSES, type JobStatus, type SliceStatus } from '../../src/store/states.ts';

export interface SliceRow {
  id: string;
  jobId: string;
  parentId: string | null;
  kind: string;
  params: unknown;
  status: SliceStatus;
  cursor: string | null;
  recentCursors: string[];
  pages: number;
  items: number;
  newItems: number;
  requests: number;
  emptyPages: number;
  newestTweetId: string | null;
  oldestTweetId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

const SLICE_COLUMNS = `id::text AS id, job_id::text AS "jobId", parent_id::text AS "parentId", kind, params, status, cursor,
  recent_cursors AS "recentCursors", pages::float8 AS pages, items::float8 AS items, new_items::float8 AS "newItems",
  requests::float8 AS requests, empty_pages AS "emptyPages", newest_tweet_id::text AS "newestTweetId",
  oldest_tweet_id::text AS "oldestTweetId", error_code AS "errorCode", error_message AS "errorMessage",
  created_at AS "createdAt", updated_at AS "updatedAt", finished_at AS "finishedAt"`;

export async function getSlice(db: Queryable, id: string): Promise<SliceRow | null> {
  const { rows } = await db.query<SliceRow>(`SELECT ${SLICE_COLUMNS} FROM job_slices WHERE id = $1::bigint`, [id]);
  return rows[0] ?? null;
}

export async function listSlices(db: Queryable, jobId: string, options: { statuses?: readonly SliceStatus[] } = {}): Promise<SliceRow[]> {
  const { rows } = await db.query<SliceRow>(
    `SELECT ${SLICE_COLUMNS} FROM job_slices WHERE job_id = $1::bigint AND ($2::text[] IS NULL OR status = ANY($2::text[])) ORDER BY id`,
    [jobId, options.statuses ?? null],
  );
  return rows;
}

/** Newest first; optionally only some statuses. */
export async function listJobs(db: Queryable, options: { statuses?: readonly JobStatus[]; limit?: number } = {}): Promise<JobRow[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM jobs WHERE ($1::text[] IS NULL OR status = ANY($1::text[])) ORDER BY id DESC LIMIT $2`,
    [options.statuses ?? null, options.limit ?? 1000],
  );
  const jobs = await Promise.all(rows.map((r) => getJob(db, r.id)));
  return jobs.filter((j): j is JobRow => j !== null);
}

/**
 * Sets a job's status; stamps started_at on the first run and finished_at on a terminal status.
 * `from` makes it a compare-and-set. Returns whether it changed.
 */
export async function setJobStatus(
  db: Queryable,
  id: string,
  status: JobStatus,
  details: { note?: string | null; errorCode?: string | null; errorMessage?: string | null; from?: readonly JobStatus[] } = {},
): Promise<boolean> {
  const result = await db.query(
    `UPDATE jobs SET status = $2,
       note = CASE WHEN $3::boolean THEN $4 ELSE note END,
       error_code = $5, error_message = $6,
       started_at = CASE WHEN $2 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
       finished_at = CASE WHEN $2 = ANY($7::text[]) THEN now() ELSE NULL END,
       updated_at = now()
     WHERE id = $1::bigint AND ($8::text[] IS NULL OR status = ANY($8::text[]))`,
    [id, status, details.note !== undefined, details.note ?? null, details.errorCode ?? null, details.errorMessage ?? null, TERMINAL_JOB_STATUSES, details.from ?? null],
  );
  return (result.rowCount ?? 0) > 0;
}

/** Sets a slice's status outside a page commit; `from` makes it a compare-and-set. */
export async function setSliceStatus(
  db: Queryable,
  id: string,
  status: SliceStatus,
  details: { errorCode?: string | null; errorMessage?: string | null; from?: readonly SliceStatus[] } = {},
): Promise<boolean> {
  const result = await db.query(
    `UPDATE job_slices SET status = $2, error_code = $3, error_message = $4, updated_at = now(),
       finished_at = CASE WHEN $2 IN ('done', 'failed', 'split', 'cancelled') THEN coalesce(finished_at, now()) ELSE NULL END
     WHERE id = $1::bigint AND ($5::text[] IS NULL OR status = ANY($5::text[]))`,
    [id, status, details.errorCode ?? null, details.errorMessage ?? null, details.from ?? null],
  );
  return (result.rowCount ?? 0) > 0;
}

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

const WATCH_COLUMNS = `job_id::text AS "jobId", handle, params, every_seconds AS "everySeconds",
  high_watermark_id::text AS "highWatermarkId", passes, next_due_at AS "nextDueAt",
  last_pass_started_at AS "lastPassStartedAt", last_pass_finished_at AS "lastPassFinishedAt",
  last_pass_new AS "lastPassNew", enabled`;

export async function getWatch(db: Queryable, jobId: string): Promise<WatchRow | null> {
  const { rows } = await db.query<WatchRow>(`SELECT ${WATCH_COLUMNS} FROM watches WHERE job_id = $1::bigint`, [jobId]);
  return rows[0] ?? null;
}

/** Enabled watches whose next pass is due at `now`, earliest first. */
export async function listDueWatches(db: Queryable, now: Date = new Date()): Promise<WatchRow[]> {
  const { rows } = await db.query<WatchRow>(
    `SELECT ${WATCH_COLUMNS} FROM watches WHERE enabled AND next_due_at <= $1 ORDER BY next_due_at`,
    [now.toISOString()],
  );
  return rows;
}

export async function setWatchEnabled(db: Queryable, jobId: string, enabled: boolean): Promise<void> {
  await db.query(`UPDATE watches SET enabled = $2 WHERE job_id = $1::bigint`, [jobId, enabled]);
}
