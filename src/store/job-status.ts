/**
 * What `status`, `--wait` and the planner read about jobs: progress of one job (with the share of
 * its date range already covered, for an ETA), and the service's recent response time.
 */
import type { Queryable } from './db.ts';
import type { JobRow } from './jobs.ts';
import { HELD_MS_COLUMN, JOB_PROGRESS_COLUMNS, readJobProgress } from './job-progress.ts';
import { JobStatus, LIVE_JOB_STATUSES } from './states.ts';

/** Median response time of the last 200 requests, or null when there are none yet. */
export async function recentLatencyMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)::float8 AS ms
       FROM (SELECT duration_ms FROM api_requests WHERE status = 200 ORDER BY id DESC LIMIT 200) r`,
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : ms;
}

export interface SliceSummary {
  pending: number;
  running: number;
  done: number;
  failed: number;
  cancelled: number;
}

type JobFields = 'id' | 'kind' | 'params' | 'pages' | 'tweets' | 'users' | 'maxRequests' | 'note' | 'errorCode' | 'errorMessage' | 'createdAt' | 'startedAt' | 'finishedAt';

export interface JobSnapshot extends Pick<JobRow, JobFields> {
  status: string;
  requests: number;
  /** Milliseconds held (paused, parked for quota) since it started, the current hold included. */
  heldMs: number;
  slices: SliceSummary;
  /** Share of the job's known range already walked (search with --since), else null. */
  fractionDone: number | null;
  watch: { everySeconds: number | null; passes: number; nextDueAt: Date | null; lastPassNew: number | null; watermarkId: string | null; gaps: Array<{ afterId: string; beforeId: string | null; reason: string }> } | null;
}

interface Row {
  id: string;
  kind: string;
  status: string;
  params: unknown;
  pages: string;
  tweets: string;
  users: string;
  requests_spent: string;
  max_requests: string | null;
  note: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  held_ms: string;
  slices: Record<string, number> | null;
  range_total: number | null;
  range_left: number | null;
  every_seconds: number | null;
  passes: number | null;
  next_due_at: Date | null;
  last_pass_new: number | null;
  watermark: string | null;
  gaps: Array<{ afterId: string; beforeId: string | null; reason: string }> | null;
  is_watch: boolean;
}

// A walking search slice still has [max(sinceMs, stopBelowMs), min(untilMs, oldest seen)) to go;
// the covered share is 1 - (sum of those) / (the planned range, from the unsplit slices).
const SNAPSHOT_SQL = `
  SELECT j.id::text, j.kind, j.status, j.params, j.pages::text, j.tweets::text, j.users::text,
         j.requests_spent::text, j.max_requests::text, j.note, j.error_code, j.error_message,
         j.created_at, j.started_at, j.finished_at, ${HELD_MS_COLUMN},
         ${JOB_PROGRESS_COLUMNS},
         w.every_seconds, w.passes, w.next_due_at, w.last_pass_new, w.high_watermark_id::text AS watermark, w.gaps,
         (w.job_id IS NOT NULL) AS is_watch
    FROM jobs j LEFT JOIN watches w ON w.job_id = j.id`;

function toSnapshot(r: Row): JobSnapshot {
  const progress = readJobProgress(r);
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    params: r.params,
    pages: Number(r.pages),
    tweets: Number(r.tweets),
    users: Number(r.users),
    requests: Number(r.requests_spent),
    maxRequests: r.max_requests === null ? null : Number(r.max_requests),
    note: r.note,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    heldMs: Number(r.held_ms),
    slices: progress.slices,
    fractionDone: progress.fractionDone,
    watch: r.is_watch
      ? {
          everySeconds: r.every_seconds,
          passes: r.passes ?? 0,
          nextDueAt: r.next_due_at,
          lastPassNew: r.last_pass_new,
          watermarkId: r.watermark,
          gaps: r.gaps ?? [],
        }
      : null,
  };
}

export async function jobSnapshot(db: Queryable, jobId: string): Promise<JobSnapshot | null> {
  const { rows } = await db.query<Row>(`${SNAPSHOT_SQL} WHERE j.id = $1::bigint`, [jobId]);
  return rows[0] ? toSnapshot(rows[0]) : null;
}

/**
 * The newest `limit` jobs and every live one however old (a watch started months ago is what an
 * operator looks for first), newest first, and how many older ended jobs were left out.
 */
export async function recentJobSnapshots(db: Queryable, limit = 50): Promise<{ jobs: JobSnapshot[]; olderEnded: number }> {
  const { rows } = await db.query<Row>(
    `${SNAPSHOT_SQL}
      WHERE j.id >= coalesce((SELECT min(id) FROM (SELECT id FROM jobs ORDER BY id DESC LIMIT $1) newest), 0)
         OR j.status = ANY($2::text[])
      ORDER BY j.id DESC`,
    [limit, LIVE_JOB_STATUSES],
  );
  const { rows: all } = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM jobs');
  return { jobs: rows.map(toSnapshot), olderEnded: Number(all[0]?.n ?? 0) - rows.length };
}

/** Whether a live job is moving, computed from Postgres at read time (never stored, so never stale). */
export interface JobHealth {
  jobId: string;
  kind: string;
  status: string;
  /** Runnable slices and no progress (a slice taken, a page committed, a request recorded) for `stalledAfterMs`. */
  stalled: boolean;
  /** The last sign of progress: the latest of the job's and its live slices' updated_at and its last request. */
  lastProgressAt: Date;
  runningSlices: number;
  pendingSlices: number;
  /** For people: what the job waits on ("no worker seen since …", "slices running but no page since …"). */
  waitsOn: string;
}

interface HealthRow {
  id: string;
  kind: string;
  status: string;
  running: number;
  pending: number;
  last_progress: Date;
  idle_ms: number;
}

/**
 * Health of every job that has slices to walk (queued, running or scheduled with a pending or
 * running slice). Stalled means none of them moved for `stalledAfterMs`: no live worker took them,
 * or a worker holds them and commits nothing. A job parked for quota (`paused_quota`), paused by a
 * person or between watch passes has no runnable slice here and is never stalled; nor is a job in
 * `waitingForRate` (the limiter's waiters, from Redis: it is queueing for its turn, not stuck).
 * Idle time is measured by Postgres' clock, the one that wrote the timestamps.
 */
export async function jobHealth(
  db: Queryable,
  options: { stalledAfterMs: number; waitingForRate?: ReadonlySet<string>; jobId?: string },
): Promise<JobHealth[]> {
  const { rows } = await db.query<HealthRow>(
    `SELECT j.id::text, j.kind, j.status,
            count(*) FILTER (WHERE s.status = 'running')::int AS running,
            count(*) FILTER (WHERE s.status = 'pending')::int AS pending,
            p.last AS last_progress,
            (extract(epoch FROM now() - p.last) * 1000)::float8 AS idle_ms
       FROM jobs j
       JOIN job_slices s ON s.job_id = j.id AND s.status IN ('pending', 'running')
       CROSS JOIN LATERAL (
         SELECT greatest(j.updated_at,
                         (SELECT max(updated_at) FROM job_slices WHERE job_id = j.id AND status IN ('pending', 'running')),
                         (SELECT max(at) FROM api_requests WHERE job_id = j.id)) AS last) p
      WHERE j.status IN ('queued', 'running', 'scheduled') AND ($1::bigint IS NULL OR j.id = $1::bigint)
      GROUP BY j.id, p.last
      ORDER BY j.id`,
    [options.jobId ?? null],
  );
  return rows.map((r) => {
    const waitingForRate = options.waitingForRate?.has(r.id) ?? false;
    const since = r.last_progress.toISOString();
    const waitsOn = waitingForRate
      ? 'waiting for rate'
      : r.running > 0
        ? `slices running but no page since ${since}`
        : `no worker seen since ${since}`;
    return {
      jobId: r.id,
      kind: r.kind,
      status: r.status,
      stalled: !waitingForRate && r.idle_ms >= options.stalledAfterMs,
      lastProgressAt: r.last_progress,
      runningSlices: r.running,
      pendingSlices: r.pending,
      waitsOn,
    };
  });
}

/** The stalled jobs among `jobHealth`. */
export async function stalledJobs(db: Queryable, options: Parameters<typeof jobHealth>[1]): Promise<JobHealth[]> {
  return (await jobHealth(db, options)).filter((h) => h.stalled);
}

/**
 * A job's state in one word (or two) a person can act on, with the reason where there is one:
 * `harvest status` and the dashboard both say it this way.
 */
export function describeJobState(
  job: { status: string; errorMessage: string | null; nextDueAt?: Date | null },
  waitingForRate: boolean,
  health?: JobHealth,
): string {
  if (health?.stalled) return `stalled: ${health.waitsOn}`;
  switch (job.status) {
    case JobStatus.RUNNING:
      return waitingForRate ? 'running (waiting for rate)' : 'running';
    case JobStatus.PAUSED_QUOTA:
      return 'paused: quota';
    case JobStatus.FAILED:
      return `failed: ${job.errorMessage ?? 'unknown'}`;
    case JobStatus.SCHEDULED:
      return job.nextDueAt ? `scheduled (next pass ${job.nextDueAt.toISOString()})` : 'scheduled';
    default:
      return job.status;
  }
}
