/**
 * Jobs and their slices: the record of what to do and how far it got. Status names are the
 * CHECK constraints of migrations/0002_jobs.sql; the jobs engine decides the transitions.
 */
import type { Queryable } from './db.ts';
import { requestColumns, type RequestRecord } from './requests.ts';

export const JobStatus = {
  QUEUED: 'queued',
  RUNNING: 'running',
  PAUSED: 'paused',
  PAUSED_QUOTA: 'paused_quota',
  SCHEDULED: 'scheduled',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
} as const;
export type JobStatusValue = (typeof JobStatus)[keyof typeof JobStatus];
const TERMINAL_JOB: readonly string[] = [JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED];

export const SliceStatus = {
  PENDING: 'pending',
  RUNNING: 'running',
  DONE: 'done',
  FAILED: 'failed',
  SPLIT: 'split',
  CANCELLED: 'cancelled',
} as const;
export type SliceStatusValue = (typeof SliceStatus)[keyof typeof SliceStatus];

export type JobPriority = 'watch' | 'backfill';

export interface JobRow {
  id: string;
  kind: string;
  status: JobStatusValue;
  params: unknown;
  priority: JobPriority;
  maxRequests: number | null;
  requestsSpent: number;
  pages: number;
  tweets: number;
  users: number;
  note: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
}

export interface SliceRow {
  id: string;
  jobId: string;
  parentId: string | null;
  kind: string;
  params: unknown;
  status: SliceStatusValue;
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

const JOB_COLUMNS = `id::text, kind, status, params, priority, max_requests, requests_spent, pages, tweets, users, note,
  error_code, error_message, created_at, started_at, finished_at, updated_at`;
const SLICE_COLUMNS = `id::text, job_id::text, parent_id::text, kind, params, status, cursor, recent_cursors, pages, items,
  new_items, requests, empty_pages, newest_tweet_id::text, oldest_tweet_id::text, error_code, error_message, created_at,
  updated_at, finished_at`;

type Row = Record<string, unknown>;
const num = (v: unknown): number => Number(v ?? 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toJob(r: Row): JobRow {
  return {
    id: r.id as string,
    kind: r.kind as string,
    status: r.status as JobStatusValue,
    params: r.params,
    priority: r.priority as JobPriority,
    maxRequests: numOrNull(r.max_requests),
    requestsSpent: num(r.requests_spent),
    pages: num(r.pages),
    tweets: num(r.tweets),
    users: num(r.users),
    note: r.note as string | null,
    errorCode: r.error_code as string | null,
    errorMessage: r.error_message as string | null,
    createdAt: r.created_at as Date,
    startedAt: r.started_at as Date | null,
    finishedAt: r.finished_at as Date | null,
    updatedAt: r.updated_at as Date,
  };
}

function toSlice(r: Row): SliceRow {
  return {
    id: r.id as string,
    jobId: r.job_id as string,
    parentId: r.parent_id as string | null,
    kind: r.kind as string,
    params: r.params,
    status: r.status as SliceStatusValue,
    cursor: r.cursor as string | null,
    recentCursors: r.recent_cursors as string[],
    pages: num(r.pages),
    items: num(r.items),
    newItems: num(r.new_items),
    requests: num(r.requests),
    emptyPages: num(r.empty_pages),
    newestTweetId: r.newest_tweet_id as string | null,
    oldestTweetId: r.oldest_tweet_id as string | null,
    errorCode: r.error_code as string | null,
    errorMessage: r.error_message as string | null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    finishedAt: r.finished_at as Date | null,
  };
}

export interface NewJob {
  kind: string;
  params: unknown;
  priority?: JobPriority;
  maxRequests?: number | null;
  status?: JobStatusValue;
}

export async function createJob(db: Queryable, job: NewJob): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO jobs (kind, params, priority, max_requests, status) VALUES ($1, $2::jsonb, $3, $4, $5) RETURNING id::text`,
    [job.kind, JSON.stringify(job.params ?? {}), job.priority ?? 'backfill', job.maxRequests ?? null, job.status ?? JobStatus.QUEUED],
  );
  return rows[0]!.id;
}

export async function getJob(db: Queryable, id: string): Promise<JobRow | null> {
  const { rows } = await db.query<Row>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1::bigint`, [id]);
  return rows[0] ? toJob(rows[0]) : null;
}

/** Newest first; optionally only some statuses. */
export async function listJobs(db: Queryable, options: { statuses?: readonly JobStatusValue[]; limit?: number } = {}): Promise<JobRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${JOB_COLUMNS} FROM jobs WHERE ($1::text[] IS NULL OR status = ANY($1::text[])) ORDER BY id DESC LIMIT $2`,
    [options.statuses ?? null, options.limit ?? 1000],
  );
  return rows.map(toJob);
}

/**
 * Sets a job's status; stamps started_at on the first run and finished_at on a terminal status.
 * `from` makes it a compare-and-set (e.g. only resume what is paused). Returns whether it changed.
 */
export async function setJobStatus(
  db: Queryable,
  id: string,
  status: JobStatusValue,
  details: { note?: string | null; errorCode?: string | null; errorMessage?: string | null; from?: readonly JobStatusValue[] } = {},
): Promise<boolean> {
  const result = await db.query(
    `UPDATE jobs SET status = $2,
       note = CASE WHEN $3::boolean THEN $4 ELSE note END,
       error_code = $5, error_message = $6,
       started_at = CASE WHEN $2 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
       finished_at = CASE WHEN $2 = ANY($7::text[]) THEN now() ELSE NULL END,
       updated_at = now()
     WHERE id = $1::bigint AND ($8::text[] IS NULL OR status = ANY($8::text[]))`,
    [
      id,
      status,
      details.note !== undefined,
      details.note ?? null,
      details.errorCode ?? null,
      details.errorMessage ?? null,
      TERMINAL_JOB,
      details.from ?? null,
    ],
  );
  return (result.rowCount ?? 0) > 0;
}

export interface NewSlice {
  kind: string;
  params: unknown;
  parentId?: string | null;
}

/** Creates slices in one statement; ids come back in input order. */
export async function createSlices(db: Queryable, jobId: string, slices: readonly NewSlice[]): Promise<string[]> {
  if (slices.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO job_slices (job_id, kind, params, parent_id)
     SELECT $1::bigint, k, p::jsonb, parent FROM unnest($2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS s(k, p, parent, n)
     ORDER BY n
     RETURNING id::text`,
    [jobId, slices.map((s) => s.kind), slices.map((s) => JSON.stringify(s.params ?? {})), slices.map((s) => s.parentId ?? null)],
  );
  // Identity values follow insertion order, which follows ORDER BY n.
  return rows.map((r) => r.id).sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
}

export async function getSlice(db: Queryable, id: string): Promise<SliceRow | null> {
  const { rows } = await db.query<Row>(`SELECT ${SLICE_COLUMNS} FROM job_slices WHERE id = $1::bigint`, [id]);
  return rows[0] ? toSlice(rows[0]) : null;
}

export async function listSlices(db: Queryable, jobId: string, options: { statuses?: readonly SliceStatusValue[] } = {}): Promise<SliceRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${SLICE_COLUMNS} FROM job_slices WHERE job_id = $1::bigint AND ($2::text[] IS NULL OR status = ANY($2::text[])) ORDER BY id`,
    [jobId, options.statuses ?? null],
  );
  return rows.map(toSlice);
}

/**
 * Sets a slice's status outside a page commit (split, failed, cancelled, back to pending).
 * `from` makes it a compare-and-set. Returns whether it changed.
 */
export async function setSliceStatus(
  db: Queryable,
  id: string,
  status: SliceStatusValue,
  details: { errorCode?: string | null; errorMessage?: string | null; from?: readonly SliceStatusValue[] } = {},
): Promise<boolean> {
  const result = await db.query(
    `UPDATE job_slices SET status = $2, error_code = $3, error_message = $4, updated_at = now(),
       finished_at = CASE WHEN $2 IN ('done', 'failed', 'split', 'cancelled') THEN coalesce(finished_at, now()) ELSE NULL END
     WHERE id = $1::bigint AND ($5::text[] IS NULL OR status = ANY($5::text[]))`,
    [id, status, details.errorCode ?? null, details.errorMessage ?? null, details.from ?? null],
  );
  return (result.rowCount ?? 0) > 0;
}

/**
 * Records requests made outside a page commit (failed attempts, profile look-ups, quota checks)
 * and adds the job-bound ones to their job's requests_spent. Run it inside the caller's
 * transaction when it must land with other writes. Returns how many rows were new.
 */
export async function recordRequests(db: Queryable, rows: readonly RequestRecord[]): Promise<number> {
  if (rows.length === 0) return 0;
  const { rows: out } = await db.query<{ n: number }>(
    `WITH ins AS (
       INSERT INTO api_requests (at, endpoint, key_fingerprint, status, duration_ms, job_id, slice_id)
       SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::int[], $5::int[], $6::bigint[], $7::bigint[])
       ON CONFLICT DO NOTHING
       RETURNING job_id),
     per_job AS (
       UPDATE jobs SET requests_spent = requests_spent + c.n, updated_at = now()
       FROM (SELECT job_id, count(*) AS n FROM ins WHERE job_id IS NOT NULL GROUP BY job_id) AS c
       WHERE jobs.id = c.job_id)
     SELECT count(*)::int AS n FROM ins`,
    requestColumns(rows),
  );
  return out[0]?.n ?? 0;
}
