/**
 * What `harvest audit` reads (Postgres only, no request): a job's slices with why each walk ended
 * (job_slices.end_reason) and how far it got (oldest_tweet_id), and the job's stored tweets per
 * day; and what `--repair` writes: slices for the uncovered ranges, the job queued again.
 */
import type { Pool, Queryable } from './db.ts';
import { withTransaction } from './db.ts';
import { insertSlices, type CreatedSlice, type NewSlice } from './jobs.ts';
import { TWITTER_EPOCH_MS } from './snowflake.ts';
import type { JobStatus } from './states.ts';

export const DAY_MS = 86_400_000;

export interface AuditSliceRow {
  id: string;
  kind: string;
  params: Record<string, unknown>;
  status: string;
  endReason: string | null;
  pages: number;
  /** Items its pages carried (0: the service answered it empty). */
  items: number;
  /** Requests committed with its pages (0: it ended without asking, e.g. nothing was missing); absent: not read. */
  requests?: number;
  /** Creation time of the oldest tweet the walk reached (ids encode it), or null. */
  oldestMs: number | null;
  /** Where the walk would go on (its next cursor), or null (it ended, or read no page). */
  cursor?: string | null;
}

export interface AuditInput {
  job: {
    id: string;
    kind: string;
    status: JobStatus;
    params: unknown;
    maxRequests: number | null;
    /** The budget the job was asked with: what a repair gives it again (max_requests grows with each repair). */
    runBudget: number | null;
    requestsSpent: number;
    /** It is a scheduled watch (--every): a cancelled one stays cancelled, a repair must not run it again. Absent: not read. */
    watch?: boolean;
  };
  slices: AuditSliceRow[];
  /** Stored tweets of the job per UTC day (day = floor(ms / DAY_MS)), by creation time. */
  tweetsPerDay: Map<number, number>;
}

export async function loadAuditInput(db: Queryable, jobId: string): Promise<AuditInput | null> {
  const { rows: jobs } = await db.query<{
    id: string;
    kind: string;
    status: JobStatus;
    params: unknown;
    max_requests: string | null;
    run_budget: string | null;
    requests_spent: string;
    watch: boolean;
  }>(
    `SELECT id::text, kind, status, params, max_requests::text, run_budget::text, requests_spent::text,
            EXISTS (SELECT 1 FROM watches w WHERE w.job_id = jobs.id AND w.every_seconds IS NOT NULL) AS watch
       FROM jobs WHERE id = $1::bigint`,
    [jobId],
  );
  const j = jobs[0];
  if (!j) return null;
  const { rows: slices } = await db.query<{
    id: string;
    kind: string;
    params: Record<string, unknown>;
    status: string;
    end_reason: string | null;
    pages: string;
    items: string;
    requests: string;
    oldest_ms: string | null;
    cursor: string | null;
  }>(
    `SELECT id::text, kind, params, status, end_reason, pages::text, items::text, requests::text, cursor,
            ((oldest_tweet_id >> 22) + ${TWITTER_EPOCH_MS})::text AS oldest_ms
       FROM job_slices WHERE job_id = $1::bigint ORDER BY id`,
    [jobId],
  );
  const { rows: days } = await db.query<{ day: string; n: string }>(
    `SELECT (((tweet_id >> 22) + ${TWITTER_EPOCH_MS}) / ${DAY_MS})::text AS day, count(*)::text AS n
       FROM job_tweets WHERE job_id = $1::bigint GROUP BY 1`,
    [jobId],
  );
  return {
    job: {
      id: j.id,
      kind: j.kind,
      status: j.status,
      params: j.params,
      maxRequests: j.max_requests === null ? null : Number(j.max_requests),
      runBudget: j.run_budget === null ? null : Number(j.run_budget),
      requestsSpent: Number(j.requests_spent),
      watch: j.watch,
    },
    slices: slices.map((s) => ({
      id: s.id,
      kind: s.kind,
      params: s.params,
      status: s.status,
      endReason: s.end_reason,
      pages: Number(s.pages),
      items: Number(s.items),
      requests: Number(s.requests),
      oldestMs: s.oldest_ms === null ? null : Number(s.oldest_ms),
      cursor: s.cursor,
    })),
    tweetsPerDay: new Map(days.map((d) => [Number(d.day), Number(d.n)])),
  };
}

export interface RepairPlan {
  slices: NewSlice[];
  /** Requests the repair may spend (null: no budget, the job had none and none was asked). */
  budget: number | null;
  /**
   * Walks of the job stopped at its --max-tweets: the stop counts anew from the tweets the job
   * holds now (jobs.max_tweets_base), so the repair may store another --max-tweets.
   */
  raiseMaxTweets?: boolean;
  note: string;
}

/**
 * Under the job's row lock, reads the job again and asks `plan` what to queue, so two repairs at
 * once (or one after another before any worker ran) see each other's slices; queues them and
 * makes the job runnable again (completed, failed or cancelled: queued). With a `budget` the job
 * gets that many more requests (its max_requests becomes what it spent plus that; a job that had
 * none keeps it as its run_budget, what a later repair gives again). Returns the new slices (each
 * with its priority) and the budget, or null when the job is gone or `plan` found nothing to queue.
 */
export async function reopenJobForRepair(
  pool: Pool,
  jobId: string,
  plan: (input: AuditInput) => RepairPlan | null,
): Promise<{ slices: CreatedSlice[]; budget: number | null } | null> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE', [jobId]);
    const input = await loadAuditInput(client, jobId);
    const p = input ? plan(input) : null;
    if (!input || !p || p.slices.length === 0) return null;
    const slices = await insertSlices(client, jobId, p.slices);
    // The failed walks' ranges are queued again: the repair's run decides how the job ends. Left
    // failed, they failed the job again at its end (rollUp), with their old error, though audit
    // found it complete. They keep why they ended (end_reason 'failed'), which is what audit reads.
    await client.query(
      `UPDATE job_slices SET status = 'done', end_reason = coalesce(end_reason, 'failed'), updated_at = now()
        WHERE job_id = $1::bigint AND status = 'failed'`,
      [jobId],
    );
    await client.query(
      `UPDATE jobs SET
              status = CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN 'queued' ELSE status END,
              finished_at = CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN NULL ELSE finished_at END,
              error_code = NULL, error_message = NULL,
              max_requests = CASE WHEN $2::bigint IS NULL THEN max_requests ELSE requests_spent + $2::bigint END,
              run_budget = coalesce(run_budget, $2::bigint),
              max_tweets_base = CASE WHEN $4::boolean THEN tweets ELSE max_tweets_base END,
              note = right(CASE WHEN note IS NULL OR note = '' THEN $3 ELSE note || '; ' || $3 END, 2000),
              updated_at = now()
        WHERE id = $1::bigint`,
      [jobId, p.budget, p.note, p.raiseMaxTweets === true],
    );
    return { slices, budget: p.budget };
  });
}

/**
 * The tweets an `audit --repair` took as the base of the job's --max-tweets (0: never raised): the
 * stop counts the job's tweets above it. Read only once the job's whole count reaches the stop.
 */
export async function maxTweetsBase(db: Queryable, jobId: string): Promise<number> {
  const { rows } = await db.query<{ base: string }>('SELECT max_tweets_base::text AS base FROM jobs WHERE id = $1::bigint', [jobId]);
  return Number(rows[0]?.base ?? 0);
}
