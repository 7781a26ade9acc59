/**
 * What a job kind is. A job (one row of `jobs`) is planned into slices (rows of `job_slices`); a
 * slice is one cursor walk over one endpoint. The slice runner fetches a page with the slice's
 * handler, then commits it with the slice's new cursor in one transaction (store/commit-page).
 * The runner knows no kind: what is particular to one (where a walk stops, splitting, watches,
 * --max-tweets) is a hook here, implemented in that kind's file.
 */
import type { z } from 'zod';
import type { ApiClient } from '../api-client/client.ts';
import type { CanonicalTweet, CanonicalUser } from '../api-client/canonical.ts';
import type { CallOptions } from '../api-client/index.ts';
import type { RequestPriority } from '../api-client/gate.ts';
import type { Logger } from '../logger.ts';
import type { Queryable } from '../store/db.ts';
import type { EdgeBatch } from '../store/edges.ts';
import type { WatchGap } from '../store/watches.ts';

export type PageEdges = EdgeBatch;

/** One fetched page, ready to commit. */
export interface FetchedPage {
  endpoint: string;
  tweets: CanonicalTweet[];
  users: CanonicalUser[];
  edges?: PageEdges[];
  /** Provenance role of `users` in job_users. */
  userRole?: string;
  nextCursor: string | null;
  quarantined: Array<{ reason: string; payload: unknown }>;
  /** Items the page carried (valid + quarantined): 0 is an empty page. */
  itemCount: number;
  /**
   * A page tweet stored but kept out of the walk's newest/oldest range: a timeline's pinned tweet
   * at the head of its first page, older than the walk's reading. Counted in the range, it became
   * the walk's oldest id, no later page could lower it, and a resumed pass re-reading stored
   * pages on its way to its gap counted every one stale and ended short, pass after pass.
   */
  outsideRange?: string;
  /**
   * The page ends a resuming pass's first segment: its next cursor opens the second (pages.ts,
   * resumeSegment). A run of empty pages does not cross it: the second segment's pages count from
   * its first, so empty pages at the first segment's end cannot end the walk before the second
   * segment has been asked for (its range stayed unread, and the next pass paid for the first again).
   */
  opensSegment?: boolean;
  /**
   * The walk's lower bound lies within this page: its tweets past the bound were left out of
   * `tweets` (a mentions pass asks from the day before its floor, and stores nothing below it);
   * the kind's afterPage ends the walk here.
   */
  reachedBound?: boolean;
  /**
   * Ids a lookup by id asked for and the service did not return (hydrate: deleted, protected,
   * suspended or unknown; an item it returned but refused as invalid is not among them). Once the
   * page is committed, the stored ones are stamped (tweets.not_returned_at), and a refresh no
   * longer pays to ask for them.
   */
  notReturnedIds?: string[];
}

export interface SliceContext {
  client: ApiClient;
  /**
   * Options for every client call of this page: the slice's priority, the job's request budget, the
   * worker's shutdown signal, and the page's attempt list (each attempt, retries included, is
   * appended there, so the page commits its own request accounting).
   */
  call: CallOptions;
  sliceId: string;
  logger: Logger;
  /** The store, for a walk that plans its next page from what earlier pages committed (conversations). */
  db?: Queryable;
}

/**
 * Hands the older part of a walking slice's remaining range to a new slice: the walking one ends
 * on reaching `stopBelowMs` (guarded on the hand-over point it had, `previousStopBelowMs`).
 */
export interface SplitProposal {
  stopBelowMs: number;
  previousStopBelowMs: number | null;
  childParams: Record<string, unknown>;
}

/** What a handler makes of a fetched page, before it is committed. */
export interface PageVerdict {
  /** The walk ends after this page (bound reached, watermark met): why, for the debug log. */
  stop?: string;
  /** Something the job's owner should read in `status` (ids not returned, an empty first page). */
  note?: string;
  /** Split off part of the remaining range, if the job has room for another walking slice. */
  split?: SplitProposal;
  /**
   * Pages the walk still expects after its next one, as far as this page tells: the next page's
   * request waits in the limiter's line ahead of its job's walks that expect fewer
   * (AcquireOptions.remainingPages), so they end together.
   */
  remainingPages?: number;
}

/** The page handler of one slice kind: fetch the page at `cursor` (null: the first). */
export interface SliceHandler<P = unknown> {
  readonly kind: string;
  readonly params: z.ZodType<P>;
  fetchPage(params: P, cursor: string | null, ctx: SliceContext): Promise<FetchedPage>;
  /**
   * The next request depends only on the params and the cursor the page returned (not on what
   * earlier pages committed, nor on a split, which moves only where a walk stops): the runner
   * fetches the next page while this one commits. A page fetched ahead is dropped (its requests
   * recorded) only when the commit ends or loses the walk.
   */
  readonly fetchAhead?: boolean;
  /**
   * The walk cannot loop: each page's cursor carries what the page ruled out, so the walk ends by
   * itself. The runner's guards against a service that pages for ever (three empty pages in a
   * row, HARVEST_MAX_STALE_PAGES pages with nothing new) do not end it: its empty pages still move on.
   */
  readonly endsByItself?: boolean;
  /**
   * Pure: stop, note or split after this page. `firstPage`: the walk's first page (no cursor);
   * `pagesBefore`: the pages the slice committed before this one (the runner always says).
   */
  afterPage?(params: P, page: FetchedPage, info: { firstPage: boolean; pagesBefore?: number }): PageVerdict;
  /**
   * Pure: how to hand half of what another walking slice still has to walk to a new slice, from
   * what it committed so far (pages, newest and oldest page tweet ids); with `remainingPages`, the
   * estimate the runner compares slices by. Undefined: not worth a split. The runner calls it when
   * one of the job's slices ends while the job walks fewer slices than its target.
   */
  splitRemainder?(params: P, progress: { pages: number; newestId: string | null; oldestId: string | null }): (SplitProposal & { remainingPages: number }) | undefined;
}

export interface SliceSpec {
  kind: string;
  params: Record<string, unknown>;
}

export interface PlanContext {
  /** Requests per second the configured keys pool to. */
  pooledRate: number;
  /** Typical response time, for choosing how many slices run at once. */
  latencyMs: number;
  now: Date;
  /**
   * Pages of items a probe expects the job to read (search's spending gate), when one was made:
   * a search plans no more slices than that, since each slice spends a request even when its
   * range is empty.
   */
  expectedPages?: number;
}

/** What a kind may do with the queues once its job is recorded. */
export interface SubmitQueues {
  scheduleWatch(jobId: string, everyMs: number): Promise<void>;
}

/** One watch pass as a slice, from the watch's watermark (null before the first pass). */
export interface WatchPassInput {
  watermarkId: string | null;
  pass: number;
  now: Date;
  /** Where a first pass reads back to, kept on the watch (null: the kind's default). */
  floorMs?: number | null;
  /** The watch's open gaps: a kind that can bound a walk from above resumes a cut pass (cutPassResume). */
  gaps?: readonly WatchGap[];
  /** The account the job's profile walk resolved, when it has run (WatchForPass.profileUserId). */
  profileUserId?: string | null;
}

/** A job kind: its validated params and how it splits into slices. */
export interface JobKind<P = unknown> {
  readonly kind: string;
  readonly params: z.ZodType<P>;
  /** The job's own (jobs.priority, shown by status); each slice runs at its own (slicePriority). */
  readonly priority: RequestPriority;
  plan(params: P, ctx: PlanContext): SliceSpec[];
  /**
   * Plans with what Postgres already holds, in place of `plan` when present (submitJob): a walk the
   * store shows to be useless is left out before it costs a request.
   */
  planWithStore?(db: Queryable, params: P, ctx: PlanContext): Promise<SliceSpec[]>;
  /** In the transaction that records the job and its slices (e.g. the watch row). */
  onCreate?(tx: Queryable, jobId: string, params: P): Promise<void>;
  /** After the job's slices are queued (e.g. the watch's scheduler). */
  afterSubmit?(queues: SubmitQueues, jobId: string, params: P): Promise<void>;
  /** The job ends early, successfully, once it has stored `tweets`: the note saying why, or null. */
  stopAt?(params: P, progress: { tweets: number }): string | null;
  /** Watch kinds: the slice of the next pass. */
  passSlice?(params: P, input: WatchPassInput): SliceSpec;
  /**
   * What `jobs.params` keeps when not all of the params (default: all of them), for a kind whose
   * slices carry everything and that nothing plans from again (no stopAt, no passSlice). Hydrate's
   * ids live in its slices: a million of them in jobs.params (22 MB) were read back with every
   * slice run, every `--wait` poll and every dashboard refresh.
   */
  recordedParams?(params: P): Record<string, unknown>;
}
