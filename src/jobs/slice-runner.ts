/**
 * Walks one slice page by page: fetch (through the gate, inside the client), then commit the
 * page with the slice's next cursor in ONE transaction, then decide: next page, split, or end.
 * It knows no job kind: the slice's handler says where a walk stops and when to split
 * (SliceHandler.afterPage), the job's kind when the whole job stops (JobKind.stopAt). A failed
 * page is turned into a decision by decideOnError (error-decision.ts, pure); this file only
 * carries the decision out. A page's fetch, and the next one's fetched ahead, are fetch-ahead.ts;
 * splits are slice-split.ts.
 *
 * Each walk is fenced: it takes the slice under a fresh lease token and every commit is guarded on
 * that lease and the cursor it fetched with. A commit that fails the guard re-reads the slice: a
 * lease taken by a newer walk (a stalled takeover) ends this one without touching the queue; the
 * same lease with an older cursor (commits lost to a Postgres crash) continues from that cursor.
 */
import { hash, randomUUID } from 'node:crypto';
import type { ApiClient } from '../api-client/index.ts';
import { AppError, ErrorCode, InputError, isAppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { AttemptRecord } from '../api-client/index.ts';
import { commitPageAlone, type CommittedPage, type PageCommit } from '../store/commit-page.ts';
import type { CommitOptions } from '../store/group-commit.ts';
import type { Pool } from '../store/db.ts';
import { isLiveJobStatus, JobStatus, SliceStatus } from '../store/states.ts';
import { sleep } from '../sleep.ts';
import { recordSliceEnd, SliceEndReason } from '../store/slice-ends.ts';
import { maxTweetsBase } from '../store/audit.ts';
import { markTweetsNotReturned } from '../store/refresh.ts';
import {
  endJob,
  failJob,
  finishSlice,
  noteWalkEnd,
  loadSliceForRun,
  pagesOfEarlierWalk,
  markSliceRunning,
  pauseJobForQuota,
  type SliceForRun,
} from '../store/job-runtime.ts';
import { decideOnError, DEFAULT_MAX_ATTEMPTS_PER_PAGE, isPermanentError, type ErrorDecision } from './error-decision.ts';
import { accountAttempts, dropAhead, fetchAhead, fetchPageOf, type Ahead } from './fetch-ahead.ts';
import type { FetchedPage, PageVerdict, SliceContext, SliceHandler } from './kind.ts';
import type { TaskOutcome } from './queue.ts';
import { jobKind, sliceHandler } from './registry.ts';
import { refill, split, type SplitDeps } from './slice-split.ts';

/** Consecutive empty pages (with a cursor) after which a walk is taken to be stuck. */
export const MAX_EMPTY_PAGES = 3;
/** Delay before a slice that made progress retries a failure, and before a page is fetched again. */
export const TRANSIENT_RETRY_MS = 2000;
/** Consecutive pages that bring no item new to the job after which a walk ends (HARVEST_MAX_STALE_PAGES). */
export const DEFAULT_MAX_STALE_PAGES = 10;

/** Also `pool`, `targetParallelism` and `onSplit`: what a split needs (SplitDeps). */
export interface SliceRunnerDeps extends SplitDeps {
  client: ApiClient;
  logger: Logger;
  /** Aborted on shutdown: the walk stops between pages, after committing the one in flight. */
  signal: AbortSignal;
  /** How long a job parked for quota waits when no key says when it can grant (HARVEST_QUOTA_RECHECK_MS). */
  quotaRecheckMs: number;
  /** Tries one page may cost before its slice fails (HARVEST_MAX_ATTEMPTS_PER_PAGE, default 6). */
  maxAttemptsPerPage?: number;
  /** Consecutive pages with no new id after which a walk ends (HARVEST_MAX_STALE_PAGES, default 10). */
  maxStalePages?: number;
  /** Delay before a page is fetched again or a walk that made progress is retried (default TRANSIENT_RETRY_MS; tests shorten it). */
  transientRetryMs?: number;
  /** Called after each committed page (metrics). */
  onPage?(info: { jobId: string; sliceId: string; tweets: number; users: number; newTweets: number }): void;
  /** Called after each page with the ms the slice spent on it, limiter waits excluded. */
  onCycle?(ms: number): void;
  /**
   * Commits a page with its cursor; the worker passes its GroupCommitter (pages ready together
   * share one transaction). Default: commitPage, one transaction per page.
   */
  commit?(page: PageCommit, options?: CommitOptions): Promise<CommittedPage>;
}

export function cursorHash(cursor: string): string {
  // One-shot hash: createHash built a Hash object per call (38 ms over a 676-page job).
  return hash('sha1', cursor, 'hex').slice(0, 16);
}

type Step =
  | { kind: 'continue' }
  | { kind: 'next'; slice: SliceForRun }
  /** `landAhead`: the job's --max-tweets was reached, and a page this walk fetched ahead is still stored. */
  | { kind: 'stop'; outcome: TaskOutcome; landAhead?: true }
  | { kind: 'reload'; slice: SliceForRun }
  /** A pause committed before this page: the slice as the page left it (pending, this walk's lease). */
  | { kind: 'paused'; slice: SliceForRun };

/** A stored slice whose kind this version does not know, or whose params no longer parse, is permanent. */
function handlerOf(slice: SliceForRun): SliceHandler<unknown> {
  try {
    return sliceHandler(slice.kind);
  } catch (error) {
    throw new InputError(`slice ${slice.id}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

export async function runSlice(sliceId: string, deps: SliceRunnerDeps): Promise<TaskOutcome> {
  const found = await loadSliceForRun(deps.pool, sliceId);
  if (!found) return { kind: 'done' };
  const log = deps.logger.child({ jobId: found.jobId, slice: found.id, sliceKind: found.kind });
  if (found.status === SliceStatus.DONE) {
    // The last page committed but the roll-up did not run (crash in between): finish it now.
    await finishSlice(deps.pool, { sliceId: found.id, jobId: found.jobId, status: 'done' });
    return { kind: 'done' };
  }
  if (found.status !== SliceStatus.PENDING && found.status !== SliceStatus.RUNNING) return { kind: 'done' };
  if (!isLiveJobStatus(found.job.status)) return { kind: 'done' };

  // Shutting down: a slice taken now would be marked running with nobody to walk it.
  if (deps.signal.aborted) return { kind: 'later', atMs: Date.now() };
  const handler = handlerOf(found);
  // The walk's lease, then the cursor it walks from: read after the lease is taken, so a commit
  // of an older walk that landed in between is seen here and nothing of it is walked twice.
  const lease = randomUUID();
  if (!(await markSliceRunning(deps.pool, found.id, found.jobId, lease))) return { kind: 'done' };
  let slice = await loadSliceForRun(deps.pool, sliceId);
  if (!slice || slice.lease !== lease || slice.status !== SliceStatus.RUNNING) return { kind: 'done' };
  // The job's --max-tweets stop as a test of a tweet count (null: the job has none), read once a walk.
  const jobStopAt = jobStopTest(slice);
  const ctx: SliceContext = {
    client: deps.client,
    call: { priority: slice.priority, jobId: slice.jobId, signal: deps.signal },
    sliceId: slice.id,
    logger: log,
    db: deps.pool,
  };

  // Whether this run fetched a page: a transient failure after progress is a new problem, not one
  // more attempt at an old one. BullMQ's attempt count belongs to the slice's queue entry for its
  // whole life (a delay does not reset it), so such failures go back to the queue uncounted.
  let progressed = false;
  // Whether a commit of this run succeeded (see the catch below).
  let committed = false;
  // Requests the page at the current cursor has cost in this run (one retry layer: the bound).
  let pageRequests = 0;
  // The next page, fetched while this one commits (handlers whose next request depends only on
  // their params and the cursor): the walk's request rate no longer pays for its commits, and the
  // commit may wait to share its transaction with other pages (GroupCommitter's gatherMs).
  let ahead: Ahead | null = null;
  const maxStale = deps.maxStalePages ?? DEFAULT_MAX_STALE_PAGES;
  const maxTriesPerPage = deps.maxAttemptsPerPage ?? DEFAULT_MAX_ATTEMPTS_PER_PAGE;
  try {
    for (;;) {
      // Shutdown: a page already fetched ahead is committed first (its request was spent).
      if (ahead === null && deps.signal.aborted) return { kind: 'later', atMs: Date.now() };
      const params = handler.params.parse(slice.params);
      const cursor = slice.cursor;
      // A page fetched again (a broken body, a failed try) gets only the tries it has left: the
      // bound is the page's, not each fetch's.
      const pageCtx = pageRequests === 0 ? ctx : { ...ctx, call: { ...ctx.call, retryPolicy: { maxAttempts: Math.max(1, maxTriesPerPage - pageRequests) } } };
      const fetched = await (ahead?.fetched ?? fetchPageOf(handler, params, cursor, pageCtx));
      ahead = null;
      if (!fetched.ok) {
        // Tries that never left the process count too: an unreachable service fails the slice
        // after as many tries as a failing one would, instead of refetching for ever.
        pageRequests += fetched.attempts.length + fetched.unsentTries;
        const step = await onFetchError(fetched.error, fetched.attempts, slice, lease, deps, log, { progressed, pageRequests });
        if (step.kind === 'stop') return step.outcome;
        if (step.kind === 'reload') {
          // The commits of this walk were lost meanwhile: the page at the record's cursor is another page.
          if (step.slice.cursor !== slice.cursor) pageRequests = 0;
          slice = step.slice;
        }
        continue;
      }
      const { page, attempts } = fetched;
      progressed = true;
      pageRequests = 0;
      const fetchedAt = performance.now();
      const verdict: PageVerdict = handler.afterPage?.(params, page, { firstPage: cursor === null, pagesBefore: slice.pages }) ?? {};
      const plan = nextStepOf(slice, page, verdict, log, handler);
      // Only while the walk goes on even if this page brings nothing new: one more stale page
      // would end it (maxStalePages), and a page fetched ahead then is a request spent for nothing.
      // And only while the slice is walking: a page committed onto a paused slice fetches nothing more.
      // Nor when this page may bring the job to its --max-tweets (the job's count at the last commit
      // plus every tweet of the page): the page fetched ahead of that stop was paid for and dropped.
      if (
        plan.next !== null &&
        handler.fetchAhead === true &&
        slice.status === SliceStatus.RUNNING &&
        slice.stalePages + 1 < maxStale &&
        !deps.signal.aborted &&
        (jobStopAt === null || !jobStopAt(slice.job.tweets + page.tweets.length))
      ) {
        ahead = fetchAhead(handler, params, plan.next, verdict.remainingPages === undefined ? ctx : withRemaining(ctx, verdict.remainingPages));
      }
      const step = await commitAndDecide(slice, lease, page, verdict, plan, attempts, deps, log, ahead?.fetched ?? null);
      committed = true;
      if (step.kind === 'paused') {
        // The page fetched ahead was requested before the pause: once sent, it is paid for, so it is
        // committed onto the paused slice (the guard takes a pending slice at this walk's cursor and
        // lease) rather than dropped and fetched again on resume. One still waiting for its grant
        // is cancelled and costs nothing.
        if (ahead === null || step.slice.cursor !== plan.next) {
          if (ahead !== null) await dropAhead(ahead, slice, deps.pool, log);
          return stopForPause(slice.id, deps.pool);
        }
        ahead.cancel();
        const landed = await ahead.fetched;
        if (!landed.ok) {
          await accountAttempts(deps.pool, slice, landed.attempts).catch((e: unknown) =>
            log.warn({ err: e }, 'could not record the requests of a page fetched ahead and dropped'),
          );
          return stopForPause(slice.id, deps.pool);
        }
        ahead = { fetched: Promise.resolve(landed), cancel: () => undefined };
        slice = step.slice;
        continue;
      }
      if (step.kind === 'stop' && step.landAhead === true && ahead !== null) {
        // Another walk's pages brought the job to its --max-tweets: this walk's page fetched
        // ahead, once sent, is paid for, so it lands on the slice, still walking (endJob's
        // keepOwn), rather than being dropped (24 paid pages of 300 in a review run); its commit
        // meets the mark again and ends the slice. One still waiting for its grant is cancelled
        // and costs nothing, and the slice is ended here.
        ahead.cancel();
        const landed = await ahead.fetched;
        ahead = null;
        const now: SliceForRun | null = landed.ok ? await loadSliceForRun(deps.pool, slice.id) : null;
        if (now !== null && now.lease === lease && now.cursor === plan.next) {
          ahead = { fetched: Promise.resolve(landed), cancel: () => undefined };
          slice = now;
          continue;
        }
        await accountAttempts(deps.pool, slice, landed.attempts).catch((e: unknown) =>
          log.warn({ err: e }, 'could not record the requests of a page fetched ahead and dropped'),
        );
        await endJob(deps.pool, slice.jobId, '', SliceEndReason.MAX_TWEETS, slice.id);
        return step.outcome;
      }
      // The slice as the commit left it (read under its locks): no second read per page.
      const reloaded = step.kind === 'next' ? step.slice : null;
      const walksOn = reloaded !== null && reloaded.status === SliceStatus.RUNNING && reloaded.lease === lease && isLiveJobStatus(reloaded.job.status);
      if (ahead !== null && !(walksOn && reloaded.cursor === plan.next)) {
        // The walk does not go on from this page (it ended, stopped, or lost its commits).
        await dropAhead(ahead, slice, deps.pool, log);
        ahead = null;
      }
      if (step.kind === 'stop') return step.outcome;
      if (step.kind === 'reload') {
        slice = step.slice;
        continue;
      }
      if (reloaded === null) continue;
      // A slice holds its place in the parallelism for the request AND the commit and bookkeeping
      // after it; the limiter wait is left out (that is time the slice does not need).
      deps.onCycle?.(attempts.reduce((sum, a) => sum + a.durationMs, 0) + (performance.now() - fetchedAt));
      if (!walksOn) return { kind: 'done' };
      slice = reloaded;
    }
  } catch (error) {
    // Whatever broke the walk (a commit's lost connection, say): the page fetched ahead is
    // cancelled or awaited, and its requests recorded, before the error goes on.
    if (ahead !== null) await dropAhead(ahead, slice, deps.pool, log);
    // After this run committed pages, a failure (a connection lost mid-commit, a deadlock) is a new
    // problem: back to the queue shortly, not one of the slice's BullMQ attempts, which would
    // otherwise add up over a long walk and fail it after 8 such errors hours apart. A run that
    // fails before any commit of its own is counted, so a commit that can never succeed still
    // ends the slice (each run spends at most one page on it).
    if (committed && !isPermanentError(error)) {
      log.warn({ err: error }, 'walk broken after progress; back to the queue shortly');
      return { kind: 'later', atMs: Date.now() + (deps.transientRetryMs ?? TRANSIENT_RETRY_MS) };
    }
    throw error;
  } finally {
    if (deps.signal.aborted) await releaseOnStop(deps.pool, slice.id, lease, log);
  }
}

/**
 * A walk this process stops (SIGTERM, Ctrl-C, the end of a `--wait`) puts its slice back to
 * pending, keeping its cursor and lease (the slice still counts as started): its queue entry goes
 * back at once, but the slice stayed `running` until a worker took it again, so `status` counted
 * a walk nobody walked and, with no worker left, the job read "stalled: slices running but no
 * page" instead of "no worker seen". Only while this walk still holds it; best effort and bounded
 * (RELEASE_ON_STOP_MS): a stop with Postgres gone or silent must still end.
 */
async function releaseOnStop(pool: Pool, sliceId: string, lease: string, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pool.query(
        `UPDATE job_slices SET status = 'pending', updated_at = now() WHERE id = $1::bigint AND lease = $2 AND status = 'running'`,
        [sliceId, lease],
      ),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from Postgres in ${RELEASE_ON_STOP_MS} ms`)), RELEASE_ON_STOP_MS);
      }),
    ]);
  } catch (error) {
    log.debug({ err: error }, 'stopping: could not put the slice back to pending');
  } finally {
    clearTimeout(timer);
  }
}

/** How long a stopping walk waits for Postgres to take its slice back (releaseOnStop). */
const RELEASE_ON_STOP_MS = 2000;

/**
 * How a walk that met a pause ends. A resume that came while the walk finished (committing the page
 * it had fetched ahead) found this walk's queue entry still active and queued nothing: the entry
 * then runs again at once, instead of leaving the slice to the periodic reconcile.
 */
async function stopForPause(sliceId: string, pool: Pool): Promise<TaskOutcome> {
  const now = await loadSliceForRun(pool, sliceId);
  return now !== null && now.status === SliceStatus.PENDING && isLiveJobStatus(now.job.status) ? { kind: 'later', atMs: Date.now() } : { kind: 'done' };
}

/**
 * The page's call options with the walk's estimate of what is left after it (PageVerdict.remainingPages).
 * Made before the commit applies a split of this page or another slice's ending splits this one:
 * a request already waiting may then claim up to twice its walk's new remainder, once.
 */
function withRemaining(ctx: SliceContext, remainingPages: number): SliceContext {
  return { ...ctx, call: { ...ctx.call, remainingPages } };
}

// Module scope, not closures made per page (docs/architecture.md, "Worker CPU").
const requestRecord = (a: AttemptRecord): NonNullable<PageCommit['requests']>[number] => ({
  endpoint: a.endpoint,
  keyFingerprint: a.keyFingerprint,
  status: a.status,
  durationMs: a.durationMs,
  at: a.at,
});

function quarantineRecords(endpoint: string, items: FetchedPage['quarantined']): NonNullable<PageCommit['quarantined']> {
  const out: NonNullable<PageCommit['quarantined']> = [];
  for (const q of items) out.push({ endpoint, reason: q.reason, payload: q.payload });
  return out;
}

/** A page that counts in the slice's run of empty pages: one that opens a resuming pass's second segment ends the run. */
const emptyPage = (page: FetchedPage): boolean => page.itemCount === 0 && page.opensSegment !== true;

/** Where the walk goes after a page: its next cursor (null: it ends with this page), why, and notes. */
interface NextStep {
  next: string | null;
  nextHash: string | null;
  endReason: SliceEndReason;
  notes: string[];
}

function nextStepOf(slice: SliceForRun, page: FetchedPage, verdict: PageVerdict, log: Logger, handler: SliceHandler<unknown>): NextStep {
  const notes: string[] = [];
  let next = page.nextCursor;
  const nextHash = next === null ? null : cursorHash(next);
  let endReason: SliceEndReason = SliceEndReason.END;
  if (next !== null && nextHash !== null && (next === slice.cursor || slice.recentCursors.includes(nextHash))) {
    notes.push(`cursor repeated after ${slice.pages + 1} pages; walk ended`);
    next = null;
    endReason = SliceEndReason.REPEATED_CURSOR;
  }
  const emptyRun = emptyPage(page) ? slice.emptyPages + 1 : 0;
  if (next !== null && emptyRun >= MAX_EMPTY_PAGES && handler.endsByItself !== true) {
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
  return { next, nextHash, endReason, notes };
}

async function commitAndDecide(
  slice: SliceForRun,
  lease: string,
  page: FetchedPage,
  verdict: PageVerdict,
  { next, nextHash, endReason, notes }: NextStep,
  attempts: AttemptRecord[],
  deps: SliceRunnerDeps,
  log: Logger,
  /** The next page's fetch, when it runs meanwhile: the commit may gather until it lands. */
  ahead: Promise<unknown> | null,
): Promise<Step> {
  const done = next === null;
  const endNote = done && notes.length > 0 ? `slice ${slice.id}: ${notes.join('; ')}` : null;
  // Before the commit that ends the walk (noteWalkEnd): once the slice is done, another walk may
  // complete the job.
  if (endNote !== null) await noteWalkEnd(deps.pool, slice.jobId, endNote);
  let result;
  let after;
  try {
    const commit = deps.commit ?? ((p: PageCommit) => commitPageAlone(deps.pool, p));
    // Every field is written, optional ones as undefined: one object shape for every page keeps
    // the commit path's property loads monomorphic (a new shape deoptimized queueAdvance, and each
    // recompile of it took ~70 ms of TurboFan time).
    ({ result, after } = await commit({
      jobId: slice.jobId,
      sliceId: slice.id,
      expectedCursor: slice.cursor,
      lease,
      nextCursor: next,
      sliceDone: done,
      sliceStatus: undefined,
      // In the commit that ends the walk, under its guard: never done without its reason (audit),
      // and never written by a walk that lost the slice.
      endReason: done ? endReason : undefined,
      tweets: page.tweets,
      users: page.users,
      edges: page.edges,
      userRole: page.userRole,
      quarantined: quarantineRecords(page.endpoint, page.quarantined),
      requests: attempts.map(requestRecord),
      recentCursorHash: next !== null && nextHash !== null ? nextHash : undefined,
      emptyPage: emptyPage(page),
      observedAt: undefined,
      outsideRange: page.outsideRange,
    }, ahead ? { waitsFor: ahead } : {}));
  } catch (error) {
    // The page is dropped (or its commit's fate is unknown: a lost connection), but its requests
    // were spent: account for them all the same. Safe if the commit did land: api_requests'
    // dedupe index (at, key, endpoint, slice) takes each request once.
    if (!(error instanceof AppError && error.code === ErrorCode.STALE_SLICE)) {
      await accountAttempts(deps.pool, slice, attempts).catch((e: unknown) =>
        log.warn({ err: e }, 'could not record the requests of a page whose commit failed'),
      );
      throw error;
    }
    await accountAttempts(deps.pool, slice, attempts);
    const now = await loadSliceForRun(deps.pool, slice.id);
    // This page's own commit landed: a batch whose COMMIT answer was lost (the connection dropped
    // after Postgres committed) is written again page by page, and each page then finds its slice
    // already at its next cursor, under this walk's lease. Go on from it as from any commit: keep
    // the page fetched ahead, and end a finished slice (its job would otherwise stay running).
    if (now && now.lease === lease && now.cursor === next) {
      if (next !== null && now.status === SliceStatus.RUNNING && isLiveJobStatus(now.job.status)) return { kind: 'next', slice: now };
      if (next === null && now.status === SliceStatus.DONE) {
        await finishSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, status: 'done', lease });
        await refill(slice, deps, log);
        return { kind: 'stop', outcome: { kind: 'done' } };
      }
    }
    if (now && now.lease === lease && now.status === SliceStatus.RUNNING && isLiveJobStatus(now.job.status)) {
      // Still this walk's slice, but its cursor is not the one this walk committed last: the
      // last commits were lost (asynchronous commit, Postgres crashed). Walk on from the record.
      log.warn({ committed: now.cursor, held: slice.cursor }, 'the committed cursor is behind this walk (commits lost); continuing from it');
      return { kind: 'reload', slice: now };
    }
    // A newer walk holds the slice (stalled takeover), or it ended: stop without touching the
    // queue entry, which belongs to the walk that holds the lease.
    log.info('slice taken over by another walk, or ended; dropping this page');
    return { kind: 'stop', outcome: { kind: 'done' } };
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
  // Once the page is in, and before its walk ends (a refresh's next pass reads the stamps): the
  // stored tweets a lookup did not return, outside the page's transaction. A hint for later
  // refreshes: lost in a crash, the next refresh only asks for them again.
  if (page.notReturnedIds !== undefined && page.notReturnedIds.length > 0) {
    await markTweetsNotReturned(deps.pool, page.notReturnedIds, new Date()).catch((e: unknown) =>
      log.warn({ err: e }, 'could not record the tweets a lookup did not return'),
    );
  }

  if (done) {
    await finishSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, status: 'done', lease });
    await refill(slice, deps, log);
    return { kind: 'stop', outcome: { kind: 'done' } };
  }
  const walked: SliceForRun = {
    ...slice,
    params: after.params,
    status: after.status as SliceForRun['status'],
    cursor: after.cursor,
    recentCursors: after.recentCursors,
    pages: after.pages,
    emptyPages: after.emptyPages,
    stalePages: result.stalePages,
    lease: after.lease,
    job: { ...slice.job, status: after.jobStatus as SliceForRun['job']['status'], tweets: after.jobTweets },
  };
  // A pause, cancel or takeover committed before this page: the walk stops here, deciding nothing
  // for the job (no stale end, no job stop, no split); the slice resumes from its cursor.
  if (after.status !== SliceStatus.RUNNING || after.lease !== lease || !isLiveJobStatus(after.jobStatus)) {
    const paused = after.status === SliceStatus.PENDING && after.lease === lease && after.jobStatus === JobStatus.PAUSED;
    return paused ? { kind: 'paused', slice: walked } : { kind: 'stop', outcome: { kind: 'done' } };
  }
  // A walk that keeps paging without bringing anything new (a service that cycles through
  // fresh cursors over the same items) would run forever: the page is committed, the walk ends.
  // A repair that walks a stopped listing again from its first page re-reads, by design, the
  // pages the stopped walk read: those do not count.
  const maxStale = deps.maxStalePages ?? DEFAULT_MAX_STALE_PAGES;
  if (result.stalePages >= maxStale && handlerOf(slice).endsByItself !== true && after.pages >= (await pagesOfEarlierWalk(deps.pool, slice)) + maxStale) {
    await recordSliceEnd(deps.pool, slice.id, SliceEndReason.STALE_PAGES, lease);
    const note = `slice ${slice.id}: ${result.stalePages} ${result.stalePages === 1 ? 'page' : 'pages'} in a row brought no new id; walk ended`;
    await finishSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, status: 'done', lease, note });
    log.warn({ stalePages: result.stalePages }, 'walk ended: pages bring nothing new');
    return { kind: 'stop', outcome: { kind: 'done' } };
  }

  const kind = jobKindOf(slice);
  const jobParams = kind.params.parse(slice.job.params);
  // The job's count as this commit left it (other slices' pages included).
  let jobStop = kind.stopAt?.(jobParams, { tweets: after.jobTweets }) ?? null;
  // An audit --repair of a job its --max-tweets stopped counts the stop from the tweets it held
  // then (jobs.max_tweets_base; each repair stopped after a page before): read only once past it.
  if (jobStop !== null) jobStop = kind.stopAt?.(jobParams, { tweets: after.jobTweets - (await maxTweetsBase(deps.pool, slice.jobId)) }) ?? null;
  if (jobStop !== null) {
    // With a page fetched ahead (sent, paid), this walk's slice keeps walking until that page has
    // landed: the runner commits it, this check comes again, and the slice ends then (the job
    // completes once no slice walks, its counts final).
    await endJob(deps.pool, slice.jobId, jobStop, SliceEndReason.MAX_TWEETS, slice.id, { keepOwn: ahead !== null });
    return { kind: 'stop', outcome: { kind: 'done' }, landAhead: true };
  }
  const splitNow = verdict.split ? await split(slice, verdict.split, deps, log) : false;
  // A split of our own just now moved our bound: the params read before it must not be walked on.
  // Only an actual split: a search proposes one on most pages, and re-reading the slice after
  // each proposal cost a Postgres round trip per page (issue 13: 567 reads in a 676-page job).
  if (splitNow) {
    const reread = await loadSliceForRun(deps.pool, slice.id);
    if (reread) return { kind: 'next', slice: reread };
  }
  return { kind: 'next', slice: walked };
}

/** Whether the job stops at a tweet count (its kind's stopAt with the job's params), or null. */
function jobStopTest(slice: SliceForRun): ((tweets: number) => boolean) | null {
  const kind = jobKindOf(slice);
  if (!kind.stopAt) return null;
  // Params that no longer parse fail the walk where they always did (the stop check after a commit).
  const parsed = kind.params.safeParse(slice.job.params);
  if (!parsed.success) return null;
  const stopAt = kind.stopAt;
  return (tweets) => stopAt(parsed.data, { tweets }) !== null;
}

function jobKindOf(slice: SliceForRun) {
  try {
    return jobKind(slice.job.kind);
  } catch (error) {
    throw new InputError(`job ${slice.jobId}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

async function onFetchError(
  error: unknown,
  attempts: readonly AttemptRecord[],
  slice: SliceForRun,
  lease: string,
  deps: SliceRunnerDeps,
  log: Logger,
  run: { progressed: boolean; pageRequests: number },
): Promise<Step> {
  // Every attempt of a failed page cost a request: record them before steering the slice.
  await accountAttempts(deps.pool, slice, attempts).catch((e: unknown) =>
    log.warn({ err: e }, 'could not record the requests of a failed page'),
  );
  const decision = decideOnError(error, {
    nowMs: Date.now(),
    progressed: run.progressed,
    quotaRecheckMs: deps.quotaRecheckMs,
    transientRetryMs: deps.transientRetryMs ?? TRANSIENT_RETRY_MS,
    pageRequests: run.pageRequests,
    maxAttemptsPerPage: deps.maxAttemptsPerPage ?? DEFAULT_MAX_ATTEMPTS_PER_PAGE,
  });
  return carryOut(decision, error, slice, lease, deps, log);
}

async function carryOut(decision: ErrorDecision, error: unknown, slice: SliceForRun, lease: string, deps: SliceRunnerDeps, log: Logger): Promise<Step> {
  const done: Step = { kind: 'stop', outcome: { kind: 'done' } };
  switch (decision.kind) {
    case 'continue':
      log.warn({ err: error }, 'a key was refused or spent; it is set aside and the next page asks again');
      return { kind: 'continue' };
    case 'refetch': {
      log.warn({ err: error }, 'fetching the page again');
      try {
        await sleep(Math.max(0, decision.atMs - Date.now()), deps.signal);
      } catch {
        return { kind: 'stop', outcome: { kind: 'later', atMs: Date.now() } };
      }
      // The slice as it is after the wait: a cancel, pause or takeover meanwhile costs no request more.
      const now = await loadSliceForRun(deps.pool, slice.id);
      if (!now || now.lease !== lease || now.status !== SliceStatus.RUNNING || !isLiveJobStatus(now.job.status)) return done;
      return { kind: 'reload', slice: now };
    }
    case 'fail-slice':
      log.error({ err: error }, 'slice failed');
      await endSliceFailed(deps.pool, slice, decision.code, decision.message, lease);
      return done;
    case 'fail-job':
      log.error({ err: error }, 'job failed');
      await failJob(deps.pool, slice.jobId, decision.code, decision.message);
      return done;
    case 'finish-slice':
      await recordSliceEnd(deps.pool, slice.id, SliceEndReason.NOT_FOUND, lease);
      await finishSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, status: 'done', lease, note: decision.note });
      return done;
    case 'park':
      await pauseJobForQuota(deps.pool, slice.jobId, decision.note);
      log.warn({ retryAt: new Date(decision.atMs).toISOString() }, 'paused: quota');
      return { kind: 'stop', outcome: { kind: 'later', atMs: decision.atMs } };
    case 'end-job':
      await endJob(deps.pool, slice.jobId, decision.note, SliceEndReason.BUDGET, slice.id);
      return done;
    case 'retry-later':
      // This process stopping (Ctrl-C, SIGTERM) is no trouble: one quiet line, not a warning with a
      // stack for each slice it was walking.
      if (deps.signal.aborted && isAppError(error) && error.code === ErrorCode.ABORTED) log.debug('stopping: back to the queue');
      else log.warn({ err: error }, 'back to the queue shortly');
      return { kind: 'stop', outcome: { kind: 'later', atMs: decision.atMs } };
    case 'rethrow':
      // Back to the queue with backoff; the final attempt marks the slice failed (failSlice).
      throw error;
  }
}

/** Called by the queue adapter when a slice's last attempt failed. */
export async function failSlice(pool: Pool, sliceId: string, error: unknown): Promise<void> {
  const slice = await loadSliceForRun(pool, sliceId);
  if (!slice) return;
  await endSliceFailed(
    pool,
    slice,
    error instanceof AppError ? error.code : 'UNEXPECTED',
    error instanceof Error ? error.message : String(error),
  );
}

/** The slice failed with a reason `status` shows (the job fails at its roll-up); a watch pass keeps its watermark. */
async function endSliceFailed(pool: Pool, slice: SliceForRun, errorCode: string, errorMessage: string, lease?: string): Promise<void> {
  await recordSliceEnd(pool, slice.id, SliceEndReason.FAILED, lease);
  await finishSlice(pool, { sliceId: slice.id, jobId: slice.jobId, status: 'failed', errorCode, errorMessage, ...(lease !== undefined ? { lease } : {}) });
}
