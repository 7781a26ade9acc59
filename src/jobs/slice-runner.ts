/**
 * Walks one slice page by page: fetch (through the gate, inside the client), then commit the
 * page with the slice's next cursor in ONE transaction, then decide: next page, split, or end.
 * It knows no job kind: the slice's handler says where a walk stops and when to split
 * (SliceHandler.afterPage), the job's kind when the whole job stops (JobKind.stopAt). A failed
 * page is turned into a decision by decideOnError (error-decision.ts, pure); this file only
 * carries the decision out.
 */
import { createHash } from 'node:crypto';
import type { ApiClient } from '../api-client/index.ts';
import type { RequestPriority } from '../api-client/gate.ts';
import { AppError, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { AttemptRecord } from '../api-client/index.ts';
import { commitPage } from '../store/commit-page.ts';
import { recordRequests } from '../store/jobs.ts';
import type { Pool } from '../store/db.ts';
import { isLiveJobStatus, SliceStatus } from '../store/states.ts';
import { recordJobEnd, recordSliceEnd, SliceEndReason } from '../store/slice-ends.ts';
import { finishFailedPass } from '../store/watches.ts';
import {
  activeSliceCount,
  endJob,
  failJob,
  finishSlice,
  loadSliceForRun,
  markSliceRunning,
  pauseJobForQuota,
  splitSlice,
  type SliceForRun,
} from '../store/job-runtime.ts';
import { attemptsOf, withAttempts } from './attempts.ts';
import { decideOnError, type ErrorDecision } from './error-decision.ts';
import type { FetchedPage, PageVerdict, SliceContext, SplitProposal } from './kind.ts';
import type { TaskOutcome } from './queue.ts';
import { jobKind, sliceHandler } from './registry.ts';

/** Consecutive empty pages (with a cursor) after which a walk is taken to be stuck. */
export const MAX_EMPTY_PAGES = 3;
/** Delay before a slice that made progress retries a transient failure (the client already retried). */
export const TRANSIENT_RETRY_MS = 2000;

export interface SliceRunnerDeps {
  pool: Pool;
  client: ApiClient;
  logger: Logger;
  /** Aborted on shutdown: the walk stops between pages, after committing the one in flight. */
  signal: AbortSignal;
  /** How long a job parked for quota waits when no key says when it can grant (HARVEST_QUOTA_RECHECK_MS). */
  quotaRecheckMs: number;
  /** How many slices of one job should walk at once (rate × latency). */
  targetParallelism(): number;
  /** Called after each committed page (metrics). */
  onPage?(info: { jobId: string; sliceId: string; tweets: number; users: number; newTweets: number }): void;
  /** Called after each page with the ms the slice spent on it, limiter waits excluded. */
  onCycle?(ms: number): void;
  /** Called when a split created a new slice that must be queued. */
  onSplit(jobId: string, sliceId: string, priority: RequestPriority): Promise<void>;
}

export function cursorHash(cursor: string): string {
  return createHash('sha1').update(cursor).digest('hex').slice(0, 16);
}

type Step = { kind: 'continue' } | { kind: 'stop'; outcome: TaskOutcome };

export async function runSlice(sliceId: string, deps: SliceRunnerDeps): Promise<TaskOutcome> {
  let slice = await loadSliceForRun(deps.pool, sliceId);
  if (!slice) return { kind: 'done' };
  const log = deps.logger.child({ jobId: slice.jobId, slice: slice.id, sliceKind: slice.kind });
  if (slice.status === SliceStatus.DONE) {
    // The last page committed but the roll-up did not run (crash in between): finish it now.
    await finishSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, status: 'done' });
    return { kind: 'done' };
  }
  if (slice.status !== SliceStatus.PENDING && slice.status !== SliceStatus.RUNNING) return { kind: 'done' };
  if (!isLiveJobStatus(slice.job.status)) return { kind: 'done' };

  const handler = sliceHandler(slice.kind);
  await markSliceRunning(deps.pool, slice.id, slice.jobId);
  const ctx: SliceContext = {
    client: deps.client,
    signal: deps.signal,
    priority: slice.job.priority,
    jobId: slice.jobId,
    sliceId: slice.id,
    logger: log,
  };

  // Whether this run committed a page: a transient failure after progress is a new problem,
  // not one more attempt at an old one (BullMQ's attempt count only resets with a fresh run).
  let progressed = false;
  for (;;) {
    if (deps.signal.aborted) return { kind: 'later', atMs: Date.now() };
    const params = handler.params.parse(slice.params);
    const cursor = slice.cursor;
    let page: FetchedPage;
    let attempts;
    try {
      ({ value: page, attempts } = await withAttempts(() => handler.fetchPage(params, cursor, ctx)));
    } catch (error) {
      const step = await onFetchError(error, slice, deps, log, progressed);
      if (step.kind === 'stop') return step.outcome;
      continue;
    }
    progressed = true;
    const fetchedAt = performance.now();
    const verdict = handler.afterPage?.(params, page, { firstPage: cursor === null }) ?? {};
    const step = await commitAndDecide(slice, page, verdict, attempts, deps, log);
    if (step.kind === 'stop') return step.outcome;
    const reloaded = await loadSliceForRun(deps.pool, slice.id);
    // A slice holds its place in the parallelism for the request AND the commit and bookkeeping
    // after it; the limiter wait is left out (that is time the slice does not need).
    deps.onCycle?.(attempts.reduce((sum, a) => sum + a.durationMs, 0) + (performance.now() - fetchedAt));
    if (!reloaded || reloaded.status !== SliceStatus.RUNNING) return { kind: 'done' };
    if (!isLiveJobStatus(reloaded.job.status)) return { kind: 'done' };
    slice = reloaded;
  }
}

async function commitAndDecide(
  slice: SliceForRun,
  page: FetchedPage,
  verdict: PageVerdict,
  attempts: AttemptRecord[],
  deps: SliceRunnerDeps,
  log: Logger,
): Promise<Step> {
  const notes: string[] = [];
  let next = page.nextCursor;
  let endReason: SliceEndReason = SliceEndReason.END;
  if (next !== null && (next === slice.cursor || slice.recentCursors.includes(cursorHash(next)))) {
    notes.push(`cursor repeated after ${slice.pages + 1} pages; walk ended`);
    next = null;
    endReason = SliceEndReason.REPEATED_CURSOR;
  }
  const emptyRun = page.itemCount === 0 ? slice.emptyPages + 1 : 0;
  if (next !== null && emptyRun >= MAX_EMPTY_PAGES) {
    notes.push(`${emptyRun} empty pages in a row; walk ended`);
    next = null;
    endReason = SliceEndReason.EMPTY_PAGES;
  }
  if (verdict.note) notes.push(verdict.note);
  if (verdict.stop) {
    log.debug({ reason: verdict.stop }, 'walk ends');
    endReason = SliceEndReason.BOUND;
    next = null;
  }
  const done = next === null;
  // Before the commit that ends the walk, so a slice is never done without its reason (audit).
  if (done) await recordSliceEnd(deps.pool, slice.id, endReason);
  let result;
  try {
    result = await commitPage(deps.pool, {
      jobId: slice.jobId,
      sliceId: slice.id,
      expectedCursor: slice.cursor,
      nextCursor: next,
      sliceDone: done,
      tweets: page.tweets,
      users: page.users,
      ...(page.edges ? { edges: page.edges } : {}),
      ...(page.userRole ? { userRole: page.userRole } : {}),
      quarantined: page.quarantined.map((q) => ({ endpoint: page.endpoint, reason: q.reason, payload: q.payload })),
      requests: attempts.map((a) => ({
        endpoint: a.endpoint,
        keyFingerprint: a.keyFingerprint,
        status: a.status,
        durationMs: a.durationMs,
        at: a.at,
      })),
      ...(next !== null ? { recentCursorHash: cursorHash(next) } : {}),
      emptyPage: page.itemCount === 0,
    });
  } catch (error) {
    if (error instanceof AppError && error.code === ErrorCode.STALE_SLICE) {
      // The page is dropped, but its requests were spent: account for them all the same.
      await accountAttempts(deps.pool, slice, attempts);
      log.info('slice moved on (another worker, or the job ended); dropping this page');
      return { kind: 'stop', outcome: { kind: 'done' } };
    }
    throw error;
  }
  deps.onPage?.({
    jobId: slice.jobId,
    sliceId: slice.id,
    tweets: page.tweets.length,
    users: page.users.length,
    newTweets: result.newTweets,
  });
  log.debug({ items: page.itemCount, newTweets: result.newTweets, done }, 'page committed');
  if (page.quarantined.length > 0) log.warn({ quarantined: page.quarantined.length }, 'items quarantined');

  if (done) {
    await finishSlice(deps.pool, {
      sliceId: slice.id,
      jobId: slice.jobId,
      status: 'done',
      ...(notes.length > 0 ? { note: `slice ${slice.id}: ${notes.join('; ')}` } : {}),
    });
    return { kind: 'stop', outcome: { kind: 'done' } };
  }

  const kind = jobKind(slice.job.kind);
  const jobStop = kind.stopAt?.(kind.params.parse(slice.job.params), { tweets: slice.job.tweets + result.newTweets }) ?? null;
  if (jobStop !== null) {
    await recordJobEnd(deps.pool, slice.jobId, SliceEndReason.MAX_TWEETS);
    await endJob(deps.pool, slice.jobId, jobStop);
    return { kind: 'stop', outcome: { kind: 'done' } };
  }
  if (verdict.split) await split(slice, verdict.split, deps, log);
  return { kind: 'continue' };
}

/** Carries out a handler's split proposal when the job walks fewer slices than its target. */
async function split(slice: SliceForRun, proposal: SplitProposal, deps: SliceRunnerDeps, log: Logger): Promise<void> {
  if ((await activeSliceCount(deps.pool, slice.jobId)) >= deps.targetParallelism()) return;
  const child = await splitSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, ...proposal });
  if (child) {
    log.info({ child, splitAt: new Date(proposal.stopBelowMs).toISOString() }, 'slice split');
    await deps.onSplit(slice.jobId, child, slice.job.priority);
  }
}

async function onFetchError(error: unknown, slice: SliceForRun, deps: SliceRunnerDeps, log: Logger, progressed: boolean): Promise<Step> {
  // Every attempt of a failed page cost a request: record them before steering the slice.
  await accountAttempts(deps.pool, slice, attemptsOf(error)).catch((e: unknown) =>
    log.warn({ err: e }, 'could not record the requests of a failed page'),
  );
  const decision = decideOnError(error, { nowMs: Date.now(), progressed, quotaRecheckMs: deps.quotaRecheckMs, transientRetryMs: TRANSIENT_RETRY_MS });
  return carryOut(decision, error, slice, deps, log);
}

async function carryOut(decision: ErrorDecision, error: unknown, slice: SliceForRun, deps: SliceRunnerDeps, log: Logger): Promise<Step> {
  const done: Step = { kind: 'stop', outcome: { kind: 'done' } };
  switch (decision.kind) {
    case 'continue':
      log.warn({ err: error }, 'a key was refused or spent; it is set aside and the next page asks again');
      return { kind: 'continue' };
    case 'fail-job':
      log.error({ err: error }, 'job failed');
      await failJob(deps.pool, slice.jobId, decision.code, decision.message);
      return done;
    case 'finish-slice':
      await recordSliceEnd(deps.pool, slice.id, SliceEndReason.NOT_FOUND);
      await finishSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, status: 'done', note: decision.note });
      return done;
    case 'park':
      await pauseJobForQuota(deps.pool, slice.jobId, decision.note);
      log.warn({ retryAt: new Date(decision.atMs).toISOString() }, 'paused: quota');
      return { kind: 'stop', outcome: { kind: 'later', atMs: decision.atMs } };
    case 'end-job':
      await recordJobEnd(deps.pool, slice.jobId, SliceEndReason.BUDGET);
      await endJob(deps.pool, slice.jobId, decision.note);
      return done;
    case 'retry-later':
      log.warn({ err: error }, 'back to the queue shortly');
      return { kind: 'stop', outcome: { kind: 'later', atMs: decision.atMs } };
    case 'rethrow':
      // Back to the queue with backoff; the final attempt marks the slice failed (failSlice).
      throw error;
  }
}

async function accountAttempts(pool: Pool, slice: SliceForRun, attempts: readonly AttemptRecord[]): Promise<void> {
  if (attempts.length === 0) return;
  await recordRequests(
    pool,
    attempts.map((a) => ({
      endpoint: a.endpoint,
      keyFingerprint: a.keyFingerprint,
      status: a.status,
      durationMs: a.durationMs,
      at: a.at,
      jobId: slice.jobId,
      sliceId: slice.id,
    })),
  );
}

/** Called by the queue adapter when a slice's last attempt failed. */
export async function failSlice(pool: Pool, sliceId: string, error: unknown): Promise<void> {
  const slice = await loadSliceForRun(pool, sliceId);
  if (!slice) return;
  await recordSliceEnd(pool, sliceId, SliceEndReason.FAILED);
  await finishSlice(pool, {
    sliceId,
    jobId: slice.jobId,
    status: 'failed',
    errorCode: error instanceof AppError ? error.code : 'UNEXPECTED',
    errorMessage: error instanceof Error ? error.message : String(error),
  });
  await finishFailedPass(pool, slice.jobId, sliceId);
}
