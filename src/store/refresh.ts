/**
 * Refresh jobs: which of a source job's tweets to re-read, and the next pass of a scheduled
 * refresh. The pass is started under the watch row's lock (as a mention watch's is), so two ticks
 * never start overlapping passes.
 */
import type { Pool, Queryable } from './db.ts';
import { withTransaction } from './db.ts';
import { insertSlices, type CreatedSlice, type NewSlice } from './jobs.ts';
import { isLiveJobStatus, TERMINAL_JOB_STATUSES, type JobStatus } from './states.ts';

export interface RefreshSelection {
  sourceJobId: string;
  /** Only tweets the harvester first stored at or before this instant (`--older-than`). */
  firstSeenBefore?: Date;
  /** Only tweets posted at or after this instant (`--for`: young enough to keep refreshing). */
  createdAfter?: Date;
}

/**
 * The source job's tweets a selection takes: FROM and WHERE, with its parameters (selectionValues).
 * A tweet a lookup stopped returning (deleted, protected, suspended: not_returned_at, migration
 * 0027) is left out until it is seen again: every pass of a schedule paid to ask for it.
 */
const SELECTION = `FROM job_tweets jt JOIN tweets t ON t.id = jt.tweet_id
      WHERE jt.job_id = $1::bigint
        AND ($2::timestamptz IS NULL OR t.first_seen_at <= $2::timestamptz)
        AND ($3::timestamptz IS NULL OR t.created_at >= $3::timestamptz)
        AND (t.not_returned_at IS NULL OR t.not_returned_at < t.last_seen_at)`;

const selectionValues = (s: RefreshSelection) => [s.sourceJobId, s.firstSeenBefore?.toISOString() ?? null, s.createdAfter?.toISOString() ?? null];

/** The source job's tweets to re-read, ascending by id (ids as decimal strings). */
export async function refreshTweetIds(db: Queryable, s: RefreshSelection): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`SELECT jt.tweet_id::text AS id ${SELECTION} ORDER BY jt.tweet_id`, selectionValues(s));
  return rows.map((r) => r.id);
}

/**
 * Stamps the stored tweets among `ids` as not returned by a lookup at `at`: a refresh leaves them
 * out until they are seen again. Rows are locked in id order, as every writer of tweets takes them.
 */
export async function markTweetsNotReturned(db: Queryable, ids: readonly string[], at: Date): Promise<void> {
  await db.query(
    `UPDATE tweets t SET not_returned_at = $2::timestamptz
       FROM (SELECT id FROM tweets WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE) s
      WHERE t.id = s.id`,
    [ids, at.toISOString()],
  );
}

/** Whether any of the source job's tweets matches `s` (refreshTweetIds without reading them). */
export async function hasRefreshTweets(db: Queryable, s: RefreshSelection): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 ${SELECTION} LIMIT 1`, selectionValues(s));
  return rows.length > 0;
}

/**
 * Whether the job exists and has not ended (completed, failed, cancelled): a watch between passes,
 * or paused, or a walk still running, may still store young tweets.
 */
export async function jobNotEnded(db: Queryable, jobId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM jobs WHERE id = $1::bigint AND status <> ALL ($2::text[])', [jobId, TERMINAL_JOB_STATUSES]);
  return rows.length > 0;
}

/** Whether the job exists (a refresh of an unknown job is refused before anything is written). */
export async function jobExists(db: Queryable, jobId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM jobs WHERE id = $1::bigint', [jobId]);
  return rows.length > 0;
}

export type RefreshPassOutcome =
  /** Slices of a pass (new, or still active from an earlier tick): queue them. */
  | { kind: 'pass'; slices: CreatedSlice[]; started: boolean }
  /** The job is no longer live or its watch is disabled: nothing to start. */
  | { kind: 'ended' }
  /** No tweet is young enough any more, nor can come: the watch was disabled and the job completed. */
  | { kind: 'completed' }
  /**
   * Nothing to re-read this tick, but the refresh goes on (`youngLeft`): young tweets too recently
   * stored for --older-than, or a source job still running that may bring some. No pass.
   */
  | { kind: 'idle' };

/**
 * Starts the next pass of a scheduled refresh unless one is active. `plan` turns the ids selected
 * by `select` (read under the lock, so a pass sees every tweet stored before it) into slices.
 */
export async function startRefreshPass(
  pool: Pool,
  jobId: string,
  pass: {
    select(db: Queryable, jobParams: unknown): Promise<string[]>;
    /**
     * Whether the refresh goes on though `select` found nothing: young tweets are left that are not
     * old enough yet, or the source job may still store some. False (or absent): the job completes.
     */
    youngLeft?(db: Queryable, jobParams: unknown): Promise<boolean>;
    plan(ids: readonly string[]): NewSlice[];
    doneNote: string;
  },
): Promise<RefreshPassOutcome> {
  return withTransaction(pool, async (client) => {
    // Lock first, then read in a new statement (READ COMMITTED: see startWatchPass). The job row
    // before the watch row, as everywhere (docs/architecture.md, "One lock order"): a pause or
    // cancel holds the job and then writes its watch, and a tick that took the watch first
    // deadlocked with it while it selected a large source job's tweets.
    await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE', [jobId]);
    await client.query('SELECT 1 FROM watches WHERE job_id = $1::bigint FOR UPDATE', [jobId]);
    const { rows } = await client.query<{ status: JobStatus; params: unknown; enabled: boolean; active: CreatedSlice[] }>(
      `SELECT j.status, j.params, w.enabled,
              coalesce((SELECT json_agg(json_build_object('id', id::text, 'priority', priority) ORDER BY id) FROM job_slices
                         WHERE job_id = j.id AND status IN ('pending', 'running')), '[]') AS active
         FROM watches w JOIN jobs j ON j.id = w.job_id
        WHERE w.job_id = $1::bigint`,
      [jobId],
    );
    const r = rows[0];
    if (!r || !r.enabled || !isLiveJobStatus(r.status)) return { kind: 'ended' };
    if (r.active.length > 0) return { kind: 'pass', slices: r.active, started: false };
    const ids = await pass.select(client, r.params);
    if (ids.length === 0 && (await pass.youngLeft?.(client, r.params))) {
      await client.query(
        `UPDATE watches SET next_due_at = CASE WHEN every_seconds IS NULL THEN NULL ELSE now() + make_interval(secs => every_seconds) END
          WHERE job_id = $1::bigint`,
        [jobId],
      );
      return { kind: 'idle' };
    }
    if (ids.length === 0) {
      await client.query('UPDATE watches SET enabled = false, next_due_at = NULL WHERE job_id = $1::bigint', [jobId]);
      await client.query(
        `UPDATE jobs SET status = 'completed', finished_at = now(), updated_at = now(),
                note = right(CASE WHEN note IS NULL OR note = '' THEN $2 ELSE note || '; ' || $2 END, 2000)
          WHERE id = $1::bigint`,
        [jobId, pass.doneNote],
      );
      return { kind: 'completed' };
    }
    const slices = await insertSlices(client, jobId, pass.plan(ids));
    await client.query(
      `UPDATE watches SET passes = passes + 1, last_pass_started_at = now(),
              next_due_at = CASE WHEN every_seconds IS NULL THEN NULL ELSE now() + make_interval(secs => every_seconds) END
        WHERE job_id = $1::bigint`,
      [jobId],
    );
    await client.query(
      `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
        WHERE id = $1::bigint AND status IN ('scheduled', 'queued')`,
      [jobId],
    );
    return { kind: 'pass', slices, started: true };
  });
}
