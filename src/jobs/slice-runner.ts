/**
 * Walks one slice page by page: fetch (through the gate, inside the client), then commit the
 * page with the slice's next cursor in ONE transaction, then decide: next page, split, or end.
 * Errors steer the slice by their code: 404 ends it with a note, 401/400/410 fail the job, a
 * spent quota parks the job until a key can grant again, transient failures go back to the queue
 * with backoff (the client already retried the request itself).
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
import { KeysRefusedError } from './limiter/index.ts';
import type { FetchedPage, SliceContext } from './kind.ts';
import type { TaskOutcome } from './queue.ts';
import { sliceHandler } from './registry.ts';
import { SearchSliceParams } from './kinds/search.ts';
import { newestMs, oldestMs } from './kinds/pages.ts';
import { splitPoint } from './time-slices.ts';

/** Consecutive empty pages (with a cursor) after which a walk is taken to be stuck. */
export const MAX_EMPTY_PAGES = 3;
/** How long a job parked for quota waits before trying again when no key says when. */
export const QUOTA_RECHECK_MS = 60_000;

export interface SliceRunnerDeps {
  pool: Pool;
  client: ApiClient;
  logger: Logger;
  /** Aborted on shutdown: the walk stops between pages, after committing the one in flight. */
  signal: AbortSignal;
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
  if (slice.status === 'done') {
    // The last page committed but the roll-up did not run (crash in between): finish it now.
    await finishSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, status: 'done' });
    return { kind: 'done' };
  }
  if (slice.status !== 'pending' && slice.status !== 'running') return { kind: 'done' };
  if (!['queued', 'running', 'paused_quota', 'scheduled'].includes(slice.job.status)) return { kind: 'done' };

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
    const step = await commitAndDecide(slice, page, attempts, deps, log);
    if (step.kind === 'stop') return step.outcome;
    const reloaded = await loadSliceForRun(deps.pool, slice.id);
    // A slice holds its place in the parallelism for the request AND the commit and bookkeeping
    // after it; the limiter wait is left out (that is time the slice does not need).
    deps.onCycle?.(attempts.reduce((sum, a) => sum + a.durationMs, 0) + (performance.now() - fetchedAt));
    if (!reloaded || reloaded.status !== 'running') return { kind: 'done' };
    if (!['running', 'queued', 'paused_quota', 'scheduled'].includes(reloaded.job.status)) return { kind: 'done' };
    slice = reloaded;
  }
}

async function commitAndDecide(
  slice: SliceForRun,
  page: FetchedPage,
  attempts: AttemptRecord[],
  deps: SliceRunnerDeps,
  log: Logger,
): Promise<Step> {
  const notes: string[] = [];
  let next = page.nextCursor;
  if (next !== null && (next === slice.cursor || slice.recentCursors.includes(cursorHash(next)))) {
    notes.push(`cursor repeated after ${slice.pages + 1} pages; walk ended`);
    next = null;
  }
  const emptyRun = page.itemCount === 0 ? slice.emptyPages + 1 : 0;
  if (next !== null && emptyRun >= MAX_EMPTY_PAGES) {
    notes.push(`${emptyRun} empty pages in a row; walk ended`);
    next = null;
  }
  if (page.note) notes.push(page.note);
  if (page.stop) {
    log.debug({ reason: page.stop }, 'walk ends');
    next = null;
  }
  if (page.itemCount === 0 && slice.pages === 0 && slice.kind === 'mentions') {
    notes.push('the first page was empty: nothing found, or the service is answering empty (outage?)');
  }
  const done = next === null;
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

  const maxTweets = (slice.job.params as { maxTweets?: number }).maxTweets;
  if (maxTweets !== undefined && slice.job.tweets + result.newTweets >= maxTweets) {
    // slice.job.tweets was read after the previous page: other slices' pages since then may make
    // the job stop one page later, never earlier (--max-tweets is approximate by design).
    await endJob(deps.pool, slice.jobId, `stopped at --max-tweets ${maxTweets}`);
    return { kind: 'stop', outcome: { kind: 'done' } };
  }
  if (slice.kind === 'search') await maybeSplit(slice, page, deps, log);
  return { kind: 'continue' };
}

/** Hands half of a dense search slice's remaining range to a new slice when the job has room. */
async function maybeSplit(slice: SliceForRun, page: FetchedPage, deps: SliceRunnerDeps, log: Logger): Promise<void> {
  const p = SearchSliceParams.parse(slice.params);
  if (p.order !== 'latest' || p.sinceMs === undefined || page.tweets.length < 2) return;
  const oldest = oldestMs(page.tweets);
  const newest = newestMs(page.tweets);
  if (oldest === null || newest === null) return;
  // What this slice still has to walk: down to its own start, or to where it handed over before.
  const floor = Math.max(p.sinceMs, p.stopBelowMs ?? p.sinceMs);
  const at = splitPoint(floor, oldest, newest - oldest);
  if (at === null) return;
  if ((await activeSliceCount(deps.pool, slice.jobId)) >= deps.targetParallelism()) return;
  const childParams = { query: p.query, order: p.order, sinceMs: floor, untilMs: at };
  const child = await splitSlice(deps.pool, {
    sliceId: slice.id,
    jobId: slice.jobId,
    stopBelowMs: at,
    previousStopBelowMs: p.stopBelowMs ?? null,
    childParams,
  });
  if (child) {
    log.info({ child, splitAt: new Date(at).toISOString() }, 'dense slice split');
    await deps.onSplit(slice.jobId, child, slice.job.priority);
  }
}

/** Delay before a slice that made progress retries a transient failure (the client already retried). */
export const TRANSIENT_RETRY_MS = 2000;

async function onFetchError(error: unknown, slice: SliceForRun, deps: SliceRunnerDeps, log: Logger, progressed: boolean): Promise<Step> {
  const code = error instanceof AppError ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  // Every attempt of a failed page cost a request: record them before steering the slice.
  await accountAttempts(deps.pool, slice, attemptsOf(error)).catch((e: unknown) =>
    log.warn({ err: e }, 'could not record the requests of a failed page'),
  );
  switch (code) {
    case ErrorCode.API_NOT_FOUND:
      await finishSlice(deps.pool, {
        sliceId: slice.id,
        jobId: slice.jobId,
        status: 'done',
        note: `target missing (404: protected, suspended, deleted or unknown): ${message}`,
      });
      return { kind: 'stop', outcome: { kind: 'done' } };
    case ErrorCode.API_AUTH_FAILED:
      // One key refused: the gate has disabled it, so the next page goes out on another key.
      // Only when every key is refused (the limiter's KeysRefusedError) does the job fail.
      if (!(error instanceof KeysRefusedError)) {
        log.error({ err: error }, 'a key was refused (401); it is disabled, other keys carry on');
        return { kind: 'continue' };
      }
      log.error({ err: error }, 'job failed');
      await failJob(deps.pool, slice.jobId, code, message);
      return { kind: 'stop', outcome: { kind: 'done' } };
    case ErrorCode.API_BAD_REQUEST:
    case ErrorCode.API_GONE:
    case ErrorCode.INPUT_INVALID:
    case ErrorCode.API_UNEXPECTED_STATUS:
      log.error({ err: error }, 'job failed');
      await failJob(deps.pool, slice.jobId, code, message);
      return { kind: 'stop', outcome: { kind: 'done' } };
    case ErrorCode.API_QUOTA_EXHAUSTED: {
      // A 403 from the service parks that key in the gate; the next page asks again and gets
      // another key, or the limiter's own QuotaExhaustedError (with retryAt) when none is left.
      const retryAt = (error as { retryAt?: Date | null }).retryAt;
      if (retryAt === undefined) return { kind: 'continue' };
      const at = Math.max(Date.now() + 1000, retryAt ? retryAt.getTime() : Date.now() + QUOTA_RECHECK_MS);
      await pauseJobForQuota(deps.pool, slice.jobId, `paused: quota (no key can grant until ${new Date(at).toISOString()})`);
      log.warn({ retryAt: new Date(at).toISOString() }, 'paused: quota');
      return { kind: 'stop', outcome: { kind: 'later', atMs: at } };
    }
    case ErrorCode.BUDGET_EXHAUSTED:
      await endJob(deps.pool, slice.jobId, 'stopped: the --max-requests budget is spent');
      return { kind: 'stop', outcome: { kind: 'done' } };
    case ErrorCode.ABORTED:
      return { kind: 'stop', outcome: { kind: 'later', atMs: Date.now() } };
    default:
      // Transient (5xx, 429 after the client's retries, transport, invalid body, database):
      // back to the queue with backoff; the final attempt marks the slice failed. A slice that
      // committed pages in this run starts its count afresh instead.
      if (progressed) {
        log.warn({ err: error }, 'transient failure after progress; retrying shortly');
        return { kind: 'stop', outcome: { kind: 'later', atMs: Date.now() + TRANSIENT_RETRY_MS } };
      }
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
  await finishSlice(pool, {
    sliceId,
    jobId: slice.jobId,
    status: 'failed',
    errorCode: error instanceof AppError ? error.code : 'UNEXPECTED',
    errorMessage: error instanceof Error ? error.message : String(error),
  });
}
