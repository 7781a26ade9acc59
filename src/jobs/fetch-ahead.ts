/**
 * A page's fetch for the slice runner, with the requests it cost, and the next page's fetch started
 * while this one commits (handlers marked SliceHandler.fetchAhead). A page that is not committed
 * still spent its requests: they are recorded on their own (accountAttempts).
 */
import type { AttemptRecord } from '../api-client/index.ts';
import type { Logger } from '../logger.ts';
import { retryIdempotentWrite, type Pool } from '../store/db.ts';
import type { SliceForRun } from '../store/job-runtime.ts';
import { recordRequests } from '../store/jobs.ts';
import type { FetchedPage, SliceContext, SliceHandler } from './kind.ts';

/**
 * A page fetched, or the error that stopped it, with the requests it cost either way and the tries
 * that never left the process (no connection: not requests, but tries the page's bound counts).
 */
type Fetched = { ok: true; page: FetchedPage; attempts: AttemptRecord[] } | { ok: false; error: unknown; attempts: AttemptRecord[]; unsentTries: number };

export function fetchPageOf<P>(handler: SliceHandler<P>, params: P, cursor: string | null, ctx: SliceContext): Promise<Fetched> {
  // The page's requests, retries included: committed with it, or recorded alone if it fails.
  const attempts: AttemptRecord[] = [];
  const unsent = { tries: 0 };
  return handler.fetchPage(params, cursor, { ...ctx, call: { ...ctx.call, attempts, unsent } }).then(
    (page): Fetched => ({ ok: true, page, attempts }),
    (error: unknown): Fetched => ({ ok: false, error, attempts, unsentTries: unsent.tries }),
  );
}

/** The next page's fetch, started while this page commits; `cancel` stops what it has not sent yet. */
export interface Ahead {
  fetched: Promise<Fetched>;
  cancel(): void;
}

export function fetchAhead<P>(handler: SliceHandler<P>, params: P, cursor: string, ctx: SliceContext): Ahead {
  // Its own signal, so that dropping it stops its wait for the limiter (and any retry's wait):
  // a request not yet granted is not spent. One already sent is seen through, as every request.
  const controller = new AbortController();
  const outer = ctx.call.signal;
  const forward = (): void => controller.abort();
  outer?.addEventListener('abort', forward, { once: true });
  if (outer?.aborted) controller.abort();
  const fetched = fetchPageOf(handler, params, cursor, { ...ctx, call: { ...ctx.call, signal: controller.signal } });
  void fetched.then(() => outer?.removeEventListener('abort', forward));
  return { fetched, cancel: () => controller.abort() };
}

/** A page fetched ahead that the walk will not commit: its requests are recorded like a failed page's. */
export async function dropAhead(ahead: Ahead, slice: SliceForRun, pool: Pool, log: Logger): Promise<void> {
  ahead.cancel();
  const dropped = await ahead.fetched;
  await accountAttempts(pool, slice, dropped.attempts).catch((e: unknown) =>
    log.warn({ err: e }, 'could not record the requests of a page fetched ahead and dropped'),
  );
}

/**
 * Records the requests of a page that is not committed with them (failed, dropped, or its commit
 * failed). Tried again after a deadlock or a lost connection: the rows are keyed (api_requests'
 * dedupe index) and requests_spent counts only rows inserted, so a write that did land is not
 * counted twice.
 */
export async function accountAttempts(pool: Pool, slice: SliceForRun, attempts: readonly AttemptRecord[]): Promise<void> {
  if (attempts.length === 0) return;
  const rows = attempts.map((a) => ({
    endpoint: a.endpoint,
    keyFingerprint: a.keyFingerprint,
    status: a.status,
    durationMs: a.durationMs,
    at: a.at,
    jobId: slice.jobId,
    sliceId: slice.id,
  }));
  // Paid for, so kept on record through a Postgres blip: tries for ~17 s (a failover), where the
  // default ~250 ms lost every request of the pages a 1.5 s outage broke (a quarter of a job's).
  await retryIdempotentWrite(() => recordRequests(pool, rows), ACCOUNT_TRIES);
}

/** Tries of accountAttempts' write: waits of 50 ms × 4^n between them, ~17 s in all. */
const ACCOUNT_TRIES = 6;
