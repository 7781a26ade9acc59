/**
 * The dashboard's reads (src/dashboard): one page of jobs, request rates per key, watches,
 * recent failures and quarantined items, and one job's detail. Each is a single statement sized
 * for a poll every second or two by ONE loop per dashboard server: the jobs list is paged
 * (LIMIT/OFFSET on the primary key), the request series reads only the last minutes of
 * api_requests through its (at, …) index, and nothing here scans tweets except one job's own.
 */
import type { Queryable } from './db.ts';
import { HELD_MS_COLUMN, JOB_PROGRESS_COLUMNS, readJobProgress } from './job-progress.ts';
import { TWITTER_EPOCH_MS } from './snowflake.ts';

export interface DashboardJobRow {
  id: string;
  kind: string;
  status: string;
  params: unknown;
  tweets: number;
  requests: number;
  maxRequests: number | null;
  note: string | null;
  errorMessage: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Milliseconds held (paused, parked for quota) since it started, the current hold included. */
  heldMs: number;
  /** Requests of this job in the last 60 s (from api_requests). */
  recentRequests: number;
  slices: { pending: number; running: number; done: number; failed: number; cancelled: number };
  /** Share of a search's planned range already walked, else null (as `harvest status`). */
  rangeFraction: number | null;
  isWatch: boolean;
  nextDueAt: Date | null;
}

interface JobRow {
  id: string;
  kind: string;
  status: string;
  params: unknown;
  tweets: string;
  requests_spent: string;
  max_requests: string | null;
  note: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  held_ms: string;
  recent_requests: number;
  slices: Record<string, number> | null;
  range_total: number | null;
  range_left: number | null;
  is_watch: boolean;
  next_due_at: Date | null;
}

// The range share is the same arithmetic as job-status.ts's snapshot: a walking search slice
// still has [max(sinceMs, stopBelowMs), min(untilMs, oldest seen)) to go.
const JOBS_PAGE_SQL = `
  WITH page AS (SELECT * FROM jobs ORDER BY id DESC OFFSET $1 LIMIT $2)
  SELECT j.id::text, j.kind, j.status, j.params, j.tweets::text, j.requests_spent::text, j.max_requests::text,
         j.note, j.error_message, j.created_at, j.started_at, j.finished_at, ${HELD_MS_COLUMN},
         (SELECT count(*)::int FROM api_requests r WHERE r.job_id = j.id AND r.at > now() - interval '60 seconds') AS recent_requests,
         ${JOB_PROGRESS_COLUMNS},
         (w.job_id IS NOT NULL) AS is_watch, w.next_due_at
    FROM page j LEFT JOIN watches w ON w.job_id = j.id
   ORDER BY j.id DESC`;

export interface JobsPage {
  total: number;
  byStatus: Record<string, number>;
  jobs: DashboardJobRow[];
}

/** Jobs newest first, `limit` from `offset`, with the count of every job by status. */
export async function dashboardJobsPage(db: Queryable, offset: number, limit: number): Promise<JobsPage> {
  const [counts, page] = await Promise.all([
    db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`),
    db.query<JobRow>(JOBS_PAGE_SQL, [offset, limit]),
  ]);
  const byStatus = Object.fromEntries(counts.rows.map((r) => [r.status, r.n]));
  return {
    total: counts.rows.reduce((sum, r) => sum + r.n, 0),
    byStatus,
    jobs: page.rows.map((r) => {
      const progress = readJobProgress(r);
      return {
        id: r.id,
        kind: r.kind,
        status: r.status,
        params: r.params,
        tweets: Number(r.tweets),
        requests: Number(r.requests_spent),
        maxRequests: r.max_requests === null ? null : Number(r.max_requests),
        note: r.note,
        errorMessage: r.error_message,
        createdAt: r.created_at,
        startedAt: r.started_at,
        finishedAt: r.finished_at,
        heldMs: Number(r.held_ms),
        recentRequests: r.recent_requests,
        slices: progress.slices,
        rangeFraction: progress.fractionDone,
        isWatch: r.is_watch,
        nextDueAt: r.next_due_at,
      };
    }),
  };
}

export interface KeyRequestBucket {
  fingerprint: string;
  /** Bucket start, Unix seconds (a multiple of bucketSeconds). */
  at: number;
  requests: number;
  rateLimited: number;
}

/** Requests (and 429s) per key fingerprint in `bucketSeconds` buckets over the last `minutes`. */
export async function keyRequestBuckets(db: Queryable, minutes = 5, bucketSeconds = 10): Promise<KeyRequestBucket[]> {
  const { rows } = await db.query<{ fingerprint: string; at: string; n: number; n429: number }>(
    `SELECT key_fingerprint AS fingerprint,
            (floor(extract(epoch FROM at) / $2::int) * $2::int)::bigint::text AS at,
            count(*)::int AS n, (count(*) FILTER (WHERE status = 429))::int AS n429
       FROM api_requests
      WHERE at > now() - make_interval(mins => $1::int)
      GROUP BY 1, 2 ORDER BY 2`,
    [minutes, bucketSeconds],
  );
  return rows.map((r) => ({ fingerprint: r.fingerprint, at: Number(r.at), requests: r.n, rateLimited: r.n429 }));
}

export interface DashboardWatch {
  jobId: string;
  kind: string;
  target: string | null;
  status: string;
  everySeconds: number | null;
  passes: number;
  lastPassFinishedAt: Date | null;
  nextDueAt: Date | null;
  openGaps: number;
}

/** Watches of jobs not ended, soonest pass first (at most `limit`). */
export async function dashboardWatches(db: Queryable, limit = 100): Promise<DashboardWatch[]> {
  const { rows } = await db.query<{
    job_id: string;
    kind: string;
    target: string | null;
    status: string;
    every_seconds: number | null;
    passes: number;
    last_pass_finished_at: Date | null;
    next_due_at: Date | null;
    open_gaps: number;
  }>(
    `SELECT w.job_id::text, w.kind, coalesce(w.handle, w.params->>'query', w.params->>'handle', w.params->>'communityId') AS target,
            j.status, w.every_seconds, w.passes, w.last_pass_finished_at, w.next_due_at, jsonb_array_length(w.gaps)::int AS open_gaps
       FROM watches w JOIN jobs j ON j.id = w.job_id
      WHERE j.status NOT IN ('completed', 'failed', 'cancelled')
      ORDER BY w.next_due_at NULLS LAST, w.job_id DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    jobId: r.job_id,
    kind: r.kind,
    target: r.target,
    status: r.status,
    everySeconds: r.every_seconds,
    passes: r.passes,
    lastPassFinishedAt: r.last_pass_finished_at,
    nextDueAt: r.next_due_at,
    openGaps: r.open_gaps,
  }));
}

export interface DashboardFailure {
  jobId: string;
  sliceId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  at: Date;
}

/** Failed jobs and failed slices, newest first. */
export async function recentFailures(db: Queryable, limit = 20): Promise<DashboardFailure[]> {
  const { rows } = await db.query<{ job_id: string; slice_id: string | null; error_code: string | null; error_message: string | null; at: Date }>(
    `(SELECT id::text AS job_id, NULL::text AS slice_id, error_code, error_message, coalesce(finished_at, updated_at) AS at
        FROM jobs WHERE status = 'failed' ORDER BY id DESC LIMIT $1)
     UNION ALL
     (SELECT job_id::text, id::text, error_code, error_message, coalesce(finished_at, updated_at)
        FROM job_slices WHERE status = 'failed' ORDER BY id DESC LIMIT $1)
     ORDER BY at DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ jobId: r.job_id, sliceId: r.slice_id, errorCode: r.error_code, errorMessage: r.error_message, at: r.at }));
}

export interface QuarantinedItem {
  id: string;
  at: Date;
  jobId: string | null;
  endpoint: string;
  reason: string;
}

/** The newest quarantined items and how many there are in all. */
export async function recentQuarantine(db: Queryable, limit = 20): Promise<{ total: number; items: QuarantinedItem[] }> {
  const [count, items] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM quarantine`),
    db.query<{ id: string; at: Date; job_id: string | null; endpoint: string; reason: string }>(
      `SELECT id::text, at, job_id::text, endpoint, reason FROM quarantine ORDER BY id DESC LIMIT $1`,
      [limit],
    ),
  ]);
  return { total: count.rows[0]?.n ?? 0, items: items.rows.map((r) => ({ id: r.id, at: r.at, jobId: r.job_id, endpoint: r.endpoint, reason: r.reason })) };
}

export interface DashboardSlice {
  id: string;
  kind: string;
  status: string;
  endReason: string | null;
  sinceMs: number | null;
  untilMs: number | null;
  /** Created-at of the oldest tweet the walk reached (ms), from its snowflake id. */
  oldestMs: number | null;
  pages: number;
  items: number;
  requests: number;
  errorMessage: string | null;
}

export interface JobDetailExtras {
  tweetsPerDay: Array<{ day: string; tweets: number }>;
  slices: DashboardSlice[];
  slicesTotal: number;
  requestsByStatus: Array<{ status: number; requests: number }>;
  /** Requests of the job in the last 60 s. */
  recentRequests: number;
}

/**
 * One job's tweets per UTC day, its slices (at most `sliceLimit`: running, pending and failed ones
 * first, then by id; oldest first, a job of thousands showed none of its live or failed slices)
 * and its requests by status.
 */
export async function jobDetailExtras(db: Queryable, jobId: string, sliceLimit = 2000): Promise<JobDetailExtras> {
  const [days, slices, count, statuses, recent] = await Promise.all([
    db.query<{ day: string; n: number }>(
      `SELECT to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n
         FROM job_tweets jt JOIN tweets t ON t.id = jt.tweet_id
        WHERE jt.job_id = $1::bigint GROUP BY 1 ORDER BY 1`,
      [jobId],
    ),
    db.query<{
      id: string;
      kind: string;
      status: string;
      end_reason: string | null;
      since_ms: number | null;
      until_ms: number | null;
      oldest_ms: number | null;
      pages: string;
      items: string;
      requests: string;
      error_message: string | null;
    }>(
      `SELECT id::text, kind, status, end_reason, (params->>'sinceMs')::float8 AS since_ms, (params->>'untilMs')::float8 AS until_ms,
              ((oldest_tweet_id >> 22) + ${TWITTER_EPOCH_MS})::float8 AS oldest_ms,
              pages::text, items::text, requests::text, error_message
         FROM job_slices WHERE job_id = $1::bigint
        ORDER BY status IN ('running', 'pending', 'failed') DESC, id LIMIT $2`,
      [jobId, sliceLimit],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint`, [jobId]),
    db.query<{ status: number; n: number }>(
      `SELECT status, count(*)::int AS n FROM api_requests WHERE job_id = $1::bigint GROUP BY status ORDER BY status`,
      [jobId],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_requests WHERE job_id = $1::bigint AND at > now() - interval '60 seconds'`, [jobId]),
  ]);
  return {
    tweetsPerDay: days.rows.map((r) => ({ day: r.day, tweets: r.n })),
    slices: slices.rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      status: r.status,
      endReason: r.end_reason,
      sinceMs: r.since_ms,
      untilMs: r.until_ms,
      oldestMs: r.oldest_ms,
      pages: Number(r.pages),
      items: Number(r.items),
      requests: Number(r.requests),
      errorMessage: r.error_message,
    })),
    slicesTotal: count.rows[0]?.n ?? 0,
    requestsByStatus: statuses.rows.map((r) => ({ status: r.status, requests: r.n })),
    recentRequests: recent.rows[0]?.n ?? 0,
  };
}
