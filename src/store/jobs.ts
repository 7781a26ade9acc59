/**
 * Jobs and their slices: the record of what to do and how far it got. Status names live in
 * states.ts; the jobs engine decides the transitions.
 */
import type { Queryable } from './db.ts';
import { addJobEndedEvent } from './outbox.ts';
import { requestColumns, type RequestRecord } from './requests.ts';
import { compareIds } from './page-rows.ts';
import { JobPriority, JobStatus } from './states.ts';

export interface JobRow {
  id: string;
  kind: string;
  status: JobStatus;
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

const JOB_COLUMNS = `id::text, kind, status, params, priority, max_requests, requests_spent, pages, tweets, users, note,
  error_code, error_message, created_at, started_at, finished_at, updated_at`;
type Row = Record<string, unknown>;
const num = (v: unknown): number => Number(v ?? 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toJob(r: Row): JobRow {
  return {
    id: r.id as string,
    kind: r.kind as string,
    status: r.status as JobStatus,
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

export interface NewJob {
  kind: string;
  params: unknown;
  priority?: JobPriority;
  maxRequests?: number | null;
  status?: JobStatus;
}

export async function createJob(db: Queryable, job: NewJob): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO jobs (kind, params, priority, max_requests, run_budget, status) VALUES ($1, $2::jsonb, $3, $4, $4, $5) RETURNING id::text`,
    [job.kind, JSON.stringify(job.params ?? {}), job.priority ?? 'backfill', job.maxRequests ?? null, job.status ?? JobStatus.QUEUED],
  );
  return rows[0]!.id;
}

/**
 * Completes a job that planned no slice, unless it has a watch (whose passes come later), in the
 * transaction that created it; its end is announced like any other's.
 */
export async function completeEmptyJob(db: Queryable, jobId: string, note: string): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE jobs SET status = 'completed', note = $2, finished_at = now(), updated_at = now()
      WHERE id = $1::bigint AND status = 'queued'
        AND NOT EXISTS (SELECT 1 FROM watches w WHERE w.job_id = $1::bigint)
        AND NOT EXISTS (SELECT 1 FROM job_slices s WHERE s.job_id = $1::bigint)`,
    [jobId, note],
  );
  if ((rowCount ?? 0) > 0) await addJobEndedEvent(db, jobId, 'completed');
}

export async function getJob(db: Queryable, id: string): Promise<JobRow | null> {
  const { rows } = await db.query<Row>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1::bigint`, [id]);
  return rows[0] ? toJob(rows[0]) : null;
}

export interface NewSlice {
  kind: string;
  params: Record<string, unknown>;
  parentId?: string | null;
  /** Where the walk starts (a repair going on from a stopped walk's cursor); null or absent: its first page. */
  cursor?: string | null;
}

export interface CreatedSlice {
  id: string;
  /** The queue it goes on and the limiter mode of its requests (slicePriority). */
  priority: JobPriority;
}

/** How far back a watch's first pass may read and still be watch work: the default 7 days, a day's rounding. */
const RECENT_FIRST_PASS_MS = 8 * 24 * 3600 * 1000;

/**
 * A slice's priority, from its params (migration 0012): a watch's pass that reads what is new
 * (down to its watermark) or a recent window (a first pass down to a floor at most about a week
 * back: `floorMs`, or `sinceMs` for a keyword watch) is watch work, so a new watch starts at once.
 * Any other walk is backfill work, whatever its job's kind: a planned history range, a crawl, a
 * list, a refresh, and a first pass that reads further back or everything there is (a whole
 * timeline, a whole community feed, `mentions --since` a year ago).
 */
export function slicePriority(params: Record<string, unknown>, nowMs: number): JobPriority {
  if (params.pass === undefined) return JobPriority.BACKFILL;
  if (typeof params.watermarkId === 'string') return JobPriority.WATCH;
  const floor = typeof params.floorMs === 'number' ? params.floorMs : typeof params.sinceMs === 'number' ? params.sinceMs : null;
  return floor !== null && nowMs - floor <= RECENT_FIRST_PASS_MS ? JobPriority.WATCH : JobPriority.BACKFILL;
}

/** Creates slices in one statement; they come back in input order, each with its priority. */
export async function insertSlices(db: Queryable, jobId: string, slices: readonly NewSlice[]): Promise<CreatedSlice[]> {
  if (slices.length === 0) return [];
  const nowMs = Date.now();
  const { rows } = await db.query<{ id: string; priority: JobPriority }>(
    `INSERT INTO job_slices (job_id, kind, params, parent_id, priority, cursor)
     SELECT $1::bigint, k, p::jsonb, parent, pr, c FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[]) WITH ORDINALITY AS s(k, p, parent, pr, c, n)
     ORDER BY n
     RETURNING id::text, priority`,
    [
      jobId,
      slices.map((s) => s.kind),
      slices.map((s) => JSON.stringify(s.params ?? {})),
      slices.map((s) => s.parentId ?? null),
      slices.map((s) => slicePriority(s.params, nowMs)),
      slices.map((s) => s.cursor ?? null),
    ],
  );
  // Identity values follow insertion order, which follows ORDER BY n.
  return rows.sort((a, b) => compareIds(a.id, b.id));
}

/** Creates slices in one statement; ids come back in input order. */
export async function createSlices(db: Queryable, jobId: string, slices: readonly NewSlice[]): Promise<string[]> {
  return (await insertSlices(db, jobId, slices)).map((s) => s.id);
}

/**
 * Records requests made outside a page commit (failed attempts, profile look-ups, quota checks)
 * and adds the job-bound ones to their job's requests_spent. Run it inside the caller's
 * transaction when it must land with other writes. Returns how many rows were new.
 */
export async function recordRequests(db: Queryable, rows: readonly RequestRecord[]): Promise<number> {
  if (rows.length === 0) return 0;
  // Lock order: the slice rows, then the job row, as endJob, finishSlice and the page commit take
  // them. The slice_id foreign key takes a KEY SHARE on each slice only at the end of the
  // statement, after the UPDATE of jobs below held the job row: a job ending meanwhile (endJob holds
  // its slices FOR UPDATE and asks for the job) deadlocked with this, and Postgres killed this one
  // after deadlock_timeout, so a stale page's request was never recorded (the Redis-flush test:
  // api_requests 149, the simulator 150, 1 run in 3 under load). `locked` is read by an InitPlan
  // before the first row is inserted, and the UPDATE of jobs reads what `ins` inserted.
  const { rows: out } = await db.query<{ n: number }>(
    `WITH locked AS (
       SELECT 1 FROM job_slices WHERE id = ANY($7::bigint[]) ORDER BY id FOR KEY SHARE),
     ins AS (
       INSERT INTO api_requests (at, endpoint, key_fingerprint, status, duration_ms, job_id, slice_id)
       SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::int[], $5::int[], $6::bigint[], $7::bigint[])
       WHERE (SELECT count(*) FROM locked) >= 0
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
