/**
 * What `status`, `--wait` and the planner read about jobs: progress of one job (with the share of
 * its date range already covered, for an ETA), and the service's recent response time.
 */
import type { Queryable } from './db.ts';
import type { JobRow } from './jobs.ts';
import { TWITTER_EPOCH_MS } from './snowflake.ts';

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
         j.created_at, j.started_at, j.finished_at,
         (SELECT jsonb_object_agg(status, n) FROM (SELECT status, count(*)::int AS n FROM job_slices
            WHERE job_id = j.id GROUP BY status) c) AS slices,
         (SELECT sum((s.params->>'untilMs')::float8 - (s.params->>'sinceMs')::float8) FROM job_slices s
           WHERE s.job_id = j.id AND s.kind = 'search' AND s.parent_id IS NULL AND s.params ? 'sinceMs') AS range_total,
         (SELECT sum(GREATEST(0,
                    LEAST((s.params->>'untilMs')::float8,
                          coalesce(((s.oldest_tweet_id >> 22) + ${TWITTER_EPOCH_MS})::float8, 'infinity'))
                  - GREATEST((s.params->>'sinceMs')::float8, coalesce((s.params->>'stopBelowMs')::float8, '-infinity'))))
            FROM job_slices s
           WHERE s.job_id = j.id AND s.kind = 'search' AND s.status IN ('pending', 'running') AND s.params ? 'sinceMs') AS range_left,
         w.every_seconds, w.passes, w.next_due_at, w.last_pass_new, w.high_watermark_id::text AS watermark, w.gaps,
         (w.job_id IS NOT NULL) AS is_watch
    FROM jobs j LEFT JOIN watches w ON w.job_id = j.id`;

function toSnapshot(r: Row): JobSnapshot {
  const c = r.slices ?? {};
  const total = r.range_total ?? 0;
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
    slices: {
      pending: c.pending ?? 0,
      running: c.running ?? 0,
      done: (c.done ?? 0) + (c.split ?? 0),
      failed: c.failed ?? 0,
      cancelled: c.cancelled ?? 0,
    },
    fractionDone: total > 0 ? Math.min(1, Math.max(0, 1 - (r.range_left ?? 0) / total)) : null,
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

export async function recentJobSnapshots(db: Queryable, limit = 50): Promise<JobSnapshot[]> {
  const { rows } = await db.query<Row>(`${SNAPSHOT_SQL} ORDER BY j.id DESC LIMIT $1`, [limit]);
  return rows.map(toSnapshot);
}
