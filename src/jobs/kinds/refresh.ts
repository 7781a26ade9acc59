/**
 * Engagement over time: re-read a job's tweets 100 a request (/v3/tweet-info-bulk) so their
 * changed counts land in tweet_metrics. A refresh is a job of its own whose slices are hydrate
 * slices (≤100 ids each, walked by the same runner through the limiter, one transaction per page);
 * the page commit writes a metrics row only for a tweet whose counts differ from the stored ones,
 * and records the tweets as the refresh job's too. A tweet no longer returned (deleted) is noted.
 *
 * Its slices come from Postgres (the source job's tweets), not from its params alone, so a refresh
 * is created by submitRefresh rather than submitJob. With everySeconds/forSeconds it is a scheduled
 * refresh: a watch row and a BullMQ job scheduler, each tick a new pass over the tweets posted
 * within forSeconds, until none is that young and the source job has ended (then the job
 * completes: nothing restarts it, so a refresh of a live watch that is quiet for a while waits).
 */
import { z } from 'zod';
import type { Pool, Queryable } from '../../store/db.ts';
import { withTransaction } from '../../store/db.ts';
import { jobIdSchema } from '../../store/job-id.ts';
import { createJob, insertSlices } from '../../store/jobs.ts';
import { hasRefreshTweets, jobNotEnded, refreshTweetIds, startRefreshPass } from '../../store/refresh.ts';
import { createWatch } from '../../store/watches.ts';
import type { JobKind } from '../kind.ts';
import type { HarvestQueues } from '../queue.ts';
import { hydrateSlices } from './hydrate.ts';

const seconds = z.number().int().positive().max(10 * 365 * 86_400);

export const RefreshJobParams = z
  .object({
    sourceJobId: jobIdSchema,
    /** Only tweets first stored at least this long ago (fresh ones need no re-read). */
    olderThanSeconds: z.number().int().nonnegative().max(10 * 365 * 86_400).optional(),
    /** Refresh again every this many seconds… */
    everySeconds: seconds.optional(),
    /** …the tweets posted within this many seconds, until none is that young. */
    forSeconds: seconds.optional(),
  })
  .strict()
  .refine((p) => (p.everySeconds === undefined) === (p.forSeconds === undefined), {
    message: 'everySeconds and forSeconds go together',
  });
export type RefreshJobParams = z.infer<typeof RefreshJobParams>;

/** Which of the source job's tweets a pass at `now` re-reads. */
export function selectionAt(p: RefreshJobParams, now: Date) {
  return {
    sourceJobId: p.sourceJobId,
    ...(p.olderThanSeconds !== undefined ? { firstSeenBefore: new Date(now.getTime() - p.olderThanSeconds * 1000) } : {}),
    ...(p.forSeconds !== undefined ? { createdAfter: new Date(now.getTime() - p.forSeconds * 1000) } : {}),
  };
}

/**
 * Whether a scheduled refresh with nothing to re-read now goes on (waits for a later pass) rather
 * than completing. A completed refresh never restarts, so it waits while young tweets may still
 * come: the source job has not ended (a live watch quiet for --for, or one that has stored nothing
 * yet, brings young tweets on its next pass), or tweets posted within --for are left that were
 * stored too recently for --older-than (a later pass refreshes them).
 */
async function youngLeft(db: Queryable, p: RefreshJobParams, now: Date): Promise<boolean> {
  if (p.forSeconds === undefined) return false;
  if (await jobNotEnded(db, p.sourceJobId)) return true;
  if (p.olderThanSeconds === undefined) return false;
  return hasRefreshTweets(db, { sourceJobId: p.sourceJobId, createdAfter: new Date(now.getTime() - p.forSeconds * 1000) });
}

/** Pure: ids → hydrate slices of at most 100 ids (one request each), as a hydrate job plans them. */
export const planRefresh = hydrateSlices;

export const refreshJob: JobKind<RefreshJobParams> = {
  kind: 'refresh',
  params: RefreshJobParams,
  priority: 'backfill',
  plan() {
    // The ids live in Postgres: submitRefresh selects them in the transaction that records the job.
    throw new Error('refresh jobs are created with submitRefresh (their tweets come from Postgres)');
  },
};

export interface RefreshEstimate {
  tweets: number;
  requests: number;
}

export async function estimateRefresh(db: Queryable, params: RefreshJobParams, now = new Date()): Promise<RefreshEstimate> {
  const p = RefreshJobParams.parse(params);
  const ids = await refreshTweetIds(db, selectionAt(p, now));
  // One request per slice: ceil(ids / 100), known without asking the service.
  return { tweets: ids.length, requests: planRefresh(ids).length };
}

export interface RefreshSubmitDeps {
  pool: Pool;
  queues: HarvestQueues;
  /** The limiter's budget store (exact --max-requests). */
  budgets: { setBudget(jobId: string, maxRequests: number, options?: { replace?: boolean }): Promise<number> };
}

export interface SubmittedRefresh {
  jobId: string;
  slices: number;
  tweets: number;
  /** Set when the job completed at submit with nothing to re-read: why (its note). Nothing was queued. */
  completed?: string;
}

const NOTHING_YOUNG = 'no tweet of the source job is young enough to refresh any more';

/**
 * Records a refresh job with its first pass's slices in one transaction, then queues them (and
 * the scheduler of a scheduled refresh). Postgres first: if the enqueue fails, reconcile finds them.
 * A refresh with nothing to re-read completes at once, without a request.
 */
export async function submitRefresh(
  deps: RefreshSubmitDeps,
  input: { params: unknown; maxRequests?: number; now?: Date },
): Promise<SubmittedRefresh> {
  const params = RefreshJobParams.parse(input.params);
  const now = input.now ?? new Date();
  const scheduled = params.everySeconds !== undefined;
  const { id, slices, tweets, note } = await withTransaction(deps.pool, async (client) => {
    const ids = await refreshTweetIds(client, selectionAt(params, now));
    // Nothing to re-read yet, but some may come (youngLeft): the refresh waits for its first pass.
    const waits = ids.length === 0 && scheduled && (await youngLeft(client, params, now));
    const empty = ids.length === 0 && !waits;
    const note = !empty ? undefined : scheduled ? NOTHING_YOUNG : 'no tweet of the source job matched; nothing to refresh';
    const created = await createJob(client, {
      kind: refreshJob.kind,
      params,
      priority: refreshJob.priority,
      maxRequests: input.maxRequests ?? null,
      ...(empty ? { status: 'completed' } : waits ? { status: 'scheduled' } : {}),
    });
    // Before the commit, replacing an older job's key under this id (see submitJob).
    if (note === undefined && input.maxRequests !== undefined) await deps.budgets.setBudget(created, input.maxRequests, { replace: true });
    if (note !== undefined) {
      await client.query(`UPDATE jobs SET note = $2, finished_at = now() WHERE id = $1::bigint`, [created, note]);
    } else if (scheduled) {
      await createWatch(client, {
        jobId: created,
        handle: `refresh:${params.sourceJobId}`,
        params,
        everySeconds: params.everySeconds ?? null,
        nextDueAt: new Date(now.getTime() + (params.everySeconds ?? 0) * 1000),
      });
      if (!waits) await client.query('UPDATE watches SET passes = 1, last_pass_started_at = now() WHERE job_id = $1::bigint', [created]);
    }
    return { id: created, slices: await insertSlices(client, created, planRefresh(ids)), tweets: ids.length, note };
  });
  if (note !== undefined) return { jobId: id, slices: 0, tweets, completed: note };
  for (const s of slices) await deps.queues.enqueueSlice(s.priority, { jobId: id, sliceId: s.id });
  // The first pass is queued above: the scheduler's first tick is the second pass, due an interval
  // from now (BullMQ's every-scheduler ticks at once otherwise, and a tick after the first pass
  // ended, on a busy watch queue, started the second at once: every tweet bought again).
  if (params.everySeconds !== undefined) await deps.queues.scheduleWatch(id, params.everySeconds * 1000, new Date(now.getTime() + params.everySeconds * 1000));
  return { jobId: id, slices: slices.length, tweets };
}

/**
 * A scheduled refresh's tick: the next pass over the tweets still young enough, unless one is
 * running; none young enough, and none can come (youngLeft), completes the job and removes its
 * scheduler. Returns undefined when
 * `jobId` is not a refresh job (the caller's own watch tick handles it), else the first slice
 * queued (or null).
 */
export async function runRefreshTick(
  jobId: string,
  deps: { pool: Pool; queues: HarvestQueues },
  now: () => Date = () => new Date(),
): Promise<string | null | undefined> {
  const { rows } = await deps.pool.query<{ kind: string }>('SELECT kind FROM jobs WHERE id = $1::bigint', [jobId]);
  if (rows[0]?.kind !== refreshJob.kind) return undefined;
  const outcome = await startRefreshPass(deps.pool, jobId, {
    select: async (db, jobParams) => refreshTweetIds(db, selectionAt(RefreshJobParams.parse(jobParams), now())),
    youngLeft: async (db, jobParams) => youngLeft(db, RefreshJobParams.parse(jobParams), now()),
    plan: planRefresh,
    doneNote: NOTHING_YOUNG,
  });
  if (outcome.kind === 'idle') return null;
  if (outcome.kind !== 'pass') {
    await deps.queues.unscheduleWatch(jobId);
    return null;
  }
  // Queueing an active slice again is a no-op (BullMQ job id per slice).
  for (const s of outcome.slices) await deps.queues.enqueueSlice(s.priority, { jobId, sliceId: s.id });
  return outcome.slices[0]?.id ?? null;
}
