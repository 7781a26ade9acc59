/**
 * Search backfill. A query over [since, until) is cut into rate × latency time slices (exact id
 * ranges, see time-slices.ts) that walk in parallel; whenever the job walks fewer (a slice ended),
 * a dense slice hands the older half of its remainder to a new slice, and the runner splits the
 * largest remainder of the job, so parallelism holds to the last pages. Without --since
 * the range has no known start: one slice walks newest-first until the service ends the walk,
 * --max-tweets or --max-requests.
 *
 * With --every, a keyword watch (identity: query and order): each pass asks for what is newer than
 * the watermark (`since_id:`), so the service itself ends the walk there and an idle pass is one
 * request. With --since, [since, now) is backfilled first (in parallel slices) and the watch starts
 * at the backfill's upper bound; without, the first pass reads back 7 days.
 */
import { z } from 'zod';
import { InputError } from '../../errors.ts';
import { createWatch, cutPassResume, passLowerBound, watchIdentity } from '../../store/watches.ts';
import type { JobKind, PageVerdict, PlanContext, SliceHandler, SliceSpec, WatchPassInput } from '../kind.ts';
import { checkSearchQuery, countQueryOperators, MAX_QUERY_OPERATORS, withOperators } from '../search-query.ts';
import { msOfId, parallelismCap, rangeOperators, splitPoint, splitRange, targetParallelism } from '../time-slices.ts';
import { MAX_TWEETS_WITH_EVERY, maxTweetsStop } from './max-tweets.ts';
import { newestMs, oldestMs, resumedPage, resumeSegment, tweetPage } from './pages.ts';
import { handoffWatermark } from './watch-handoff.ts';

/** How far back a keyword watch's first pass reads without --since. */
export const WATCH_FIRST_PASS_LOOKBACK_MS = 7 * 24 * 3600 * 1000;

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD');

export const SearchJobParams = z
  .object({
    query: z.string().trim().min(1).max(512),
    order: z.enum(['latest', 'popular']).default('latest'),
    since: isoDate.optional(),
    until: isoDate.optional(),
    maxTweets: z.number().int().positive().optional(),
    /** A keyword watch: seconds between passes. */
    everySeconds: z.number().int().min(60).optional(),
  })
  .strict();
export type SearchJobParams = z.infer<typeof SearchJobParams>;

export const SearchSliceParams = z.object({
  query: z.string().min(1),
  order: z.enum(['latest', 'popular']),
  sinceMs: z.number().int().optional(),
  untilMs: z.number().int().optional(),
  /** Set when this slice handed [sinceMs, stopBelowMs) to another: the walk ends there. */
  stopBelowMs: z.number().int().optional(),
  /** A watch pass: only ids above this (since_id:), newest first. */
  watermarkId: z.string().regex(/^\d+$/).nullable().optional(),
  pass: z.number().int().positive().optional(),
  /** A pass resuming one cut short (cutPassResume): ids above this first, then below resumeBelowId. */
  resumeFromId: z.string().regex(/^\d+$/).optional(),
  resumeBelowId: z.string().regex(/^\d+$/).optional(),
});
export type SearchSliceParams = z.infer<typeof SearchSliceParams>;

const dayMs = (date: string) => Date.parse(`${date}T00:00:00Z`);

/**
 * Refuses (InputError, before any request) a query this job cannot run as meant. Every slice adds
 * max_id: (the range always ends, at --until or now) and, with --since, since_id:.
 */
export function checkSearchJob(
  params: Pick<SearchJobParams, 'query' | 'since' | 'until'> & { order?: string; everySeconds?: number | undefined; maxTweets?: number | undefined },
): void {
  if (params.everySeconds !== undefined) {
    if (params.until !== undefined) throw new InputError('--every watches from now on: it cannot take --until');
    if (params.maxTweets !== undefined) throw new InputError(MAX_TWEETS_WITH_EVERY);
    if (params.order === 'popular') throw new InputError('--every reads newest first: it cannot take --order popular');
  }
  checkSearchQuery(params.query, {
    addedOperators: params.since ? 2 : 1,
    boundsTime: params.since !== undefined || params.until !== undefined || params.everySeconds !== undefined,
  });
}

/** A keyword watch's pass: above the watermark, or (first pass) from the floor. */
function searchPassSlice(params: SearchJobParams, input: WatchPassInput): SliceSpec {
  const floorMs = input.floorMs ?? input.now.getTime() - WATCH_FIRST_PASS_LOOKBACK_MS;
  // The part below a cut pass's read range takes max_id: as well: only when the query has room.
  const roomForBounds = countQueryOperators(params.query) + 2 <= MAX_QUERY_OPERATORS;
  const resume = roomForBounds ? cutPassResume(input.gaps, passLowerBound(input.watermarkId, input.watermarkId === null ? floorMs : null)) : null;
  return {
    kind: 'search',
    params: {
      query: params.query,
      order: 'latest',
      ...(input.watermarkId === null ? { sinceMs: floorMs } : {}),
      watermarkId: input.watermarkId,
      pass: input.pass,
      ...(resume ? { resumeFromId: resume.fromId, resumeBelowId: resume.belowId } : {}),
    } satisfies SearchSliceParams,
  };
}

/**
 * Where a search's range ends: --until, but never after now. Nothing is posted after now, so a
 * later --until would only add empty slices (and probes), and decades ahead a max_id beyond 64 bits.
 */
export function searchUntilMs(params: Pick<SearchJobParams, 'until'>, now: Date): number {
  return params.until ? Math.min(dayMs(params.until), now.getTime()) : now.getTime();
}

/**
 * How many slices a backfill with --since starts with: the target parallelism, or fewer when a
 * probe expects fewer pages (a slice whose range holds nothing still costs its request; a sparse
 * range of 74 slices spent 74 requests on 2 tweets). A dense slice splits as it goes.
 */
export function initialSlices(ctx: Pick<PlanContext, 'pooledRate' | 'latencyMs' | 'expectedPages'>): number {
  const target = targetParallelism(ctx.pooledRate, ctx.latencyMs, parallelismCap(ctx.pooledRate));
  return ctx.expectedPages === undefined ? target : Math.max(1, Math.min(target, ctx.expectedPages));
}

/**
 * What a popular search can claim. The simulator ranks the 10,000 most recent matches of a
 * range; production's reference says only "popular or latest", nothing of how many matches its
 * ranking holds, so a walk to the end of it is not known to be every match.
 */
export const POPULAR_NOTE = 'order popular: the service ranks a selection of the matches, so this may not hold every one (--order latest reads them all)';

export const searchJob: JobKind<SearchJobParams> = {
  kind: 'search',
  params: SearchJobParams,
  priority: 'backfill',
  plan(params, ctx) {
    checkSearchJob(params);
    const untilMs = searchUntilMs(params, ctx.now);
    const base = { query: params.query, order: params.order };
    // A watch without --since has no backfill: its first pass (started by submitJob) reads back.
    if (!params.since && params.everySeconds !== undefined) return [];
    if (!params.since) return [{ kind: 'search', params: { ...base, untilMs } }];
    // Start at the target parallelism: the keys are busy from the first second (a quarter of it
    // cost ~20% of a short job's rate in the ramp). A sparse query pays one partial page per slice
    // more; when a slice ends, the runner splits the largest remainder (splitRemainder), so the
    // parallelism holds to the last pages.
    const ranges = splitRange({ sinceMs: dayMs(params.since), untilMs }, initialSlices(ctx));
    return ranges.map((r) => ({ kind: 'search', params: { ...base, sinceMs: r.sinceMs, untilMs: r.untilMs } }));
  },
  stopAt: (params, progress) => maxTweetsStop(params.maxTweets, progress),
  async onCreate(tx, jobId, params) {
    // Said on the job, where status, the dashboard and audit's reader see it: a popular walk
    // that reads to the end of what the service ranks is complete by every record we keep.
    if (params.order === 'popular') await tx.query('UPDATE jobs SET note = $2 WHERE id = $1::bigint', [jobId, POPULAR_NOTE]);
    if (params.everySeconds === undefined) return;
    await createWatch(tx, {
      jobId,
      kind: 'search',
      identity: watchIdentity('search', { query: params.query }),
      handle: null,
      params,
      everySeconds: params.everySeconds,
      floorMs: params.since ? dayMs(params.since) : Date.now() - WATCH_FIRST_PASS_LOOKBACK_MS,
      seedWatermarkId: await handoffWatermark(tx, jobId),
    });
  },
  async afterSubmit(queues, jobId, params) {
    if (params.everySeconds !== undefined) await queues.scheduleWatch(jobId, params.everySeconds * 1000);
  },
  passSlice: searchPassSlice,
};

/**
 * The slice's query: the user's, bracketed, then the slice's id bounds (see search-query.ts). A
 * resuming pass (resumeSegment) reads above the cut pass's newest first, then below its oldest.
 */
export function sliceQuery(p: SearchSliceParams, segment: { below: boolean } = { below: false }): string {
  if (p.resumeFromId !== undefined && p.resumeBelowId !== undefined) {
    if (!segment.below) return withOperators(p.query, `since_id:${p.resumeFromId}`);
    const lower = p.watermarkId != null ? `since_id:${p.watermarkId}` : rangeOperators({ sinceMs: p.sinceMs });
    return withOperators(p.query, `${lower} max_id:${(BigInt(p.resumeBelowId) - 1n).toString()}`.trim());
  }
  if (p.watermarkId != null) return withOperators(p.query, `since_id:${p.watermarkId}`);
  return withOperators(p.query, rangeOperators({ sinceMs: p.sinceMs, untilMs: p.untilMs }));
}

export const searchSlice: SliceHandler<SearchSliceParams> = {
  kind: 'search',
  params: SearchSliceParams,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    if (p.resumeFromId === undefined) {
      const page = await ctx.client.searchTweets({ query: sliceQuery(p), order: p.order, ...(cursor ? { cursor } : {}) }, ctx.call);
      return tweetPage('POST /v3/search-tweets', page);
    }
    // A resuming pass: since_id: ends the first segment where the cut pass's reading began, so the
    // service's end of it is where the second begins.
    const segment = resumeSegment(cursor);
    const page = await ctx.client.searchTweets(
      { query: sliceQuery(p, segment), order: p.order, ...(segment.cursor ? { cursor: segment.cursor } : {}) },
      ctx.call,
    );
    return resumedPage(tweetPage('POST /v3/search-tweets', page), segment.below, page.nextCursor === null);
  },
  afterPage(p, page, info) {
    const verdict: PageVerdict = {};
    if (p.pass !== undefined) {
      // A watch pass never splits (one slice per pass); since_id: bounds it, this only guards.
      const watermark = p.watermarkId == null ? null : BigInt(p.watermarkId);
      if (watermark !== null && page.tweets.some((t) => BigInt(t.id) <= watermark)) verdict.stop = 'caught up with the previous pass';
      return verdict;
    }
    const oldest = oldestMs(page.tweets);
    if (p.stopBelowMs !== undefined && p.order === 'latest' && oldest !== null && oldest < p.stopBelowMs) {
      verdict.stop = 'reached the range handed to another slice';
      return verdict;
    }
    // Only a walk newest-first down to a known start can split or say what it has left.
    if (p.order !== 'latest' || p.sinceMs === undefined || oldest === null) return verdict;
    const newest = newestMs(page.tweets) as number;
    const floor = walkFloor(p, p.sinceMs);
    const split = page.tweets.length < 2 ? undefined : proposeSplit(p, floor, oldest, newest);
    if (split) verdict.split = split;
    const remaining = remainingPagesBelow(p, floor, oldest, newest, info.pagesBefore);
    if (remaining !== undefined) verdict.remainingPages = remaining;
    return verdict;
  },
  splitRemainder(p, progress) {
    if (p.pass !== undefined || p.order !== 'latest' || p.sinceMs === undefined) return undefined;
    if (progress.pages < 1 || progress.oldestId === null || progress.newestId === null) return undefined;
    const oldest = msOfId(progress.oldestId);
    const floor = walkFloor(p, p.sinceMs);
    // Time one page covered so far; a first page whose tweets share a millisecond says nothing.
    const msPerPage = (msOfId(progress.newestId) - oldest) / progress.pages;
    if (!(msPerPage > 0)) return undefined;
    // The walk is about a page further than it committed: it fetches its next page while one
    // commits (fetchAhead), and a commit may gather for a moment. Splitting from the committed
    // oldest would hand the new slice part of a page already fetched (measured: ~1% more requests).
    const walked = oldest - msPerPage;
    // Two pages or more left: the new slice's partial last page costs at most one request, and the
    // tail of the job keeps its parallelism (issue 13: whole-job utilization).
    const at = splitPoint(floor, walked, msPerPage, 1);
    if (at === null) return undefined;
    const childParams: SearchSliceParams = { query: p.query, order: p.order, sinceMs: floor, untilMs: at };
    return { stopBelowMs: at, previousStopBelowMs: p.stopBelowMs ?? null, childParams, remainingPages: (walked - floor) / msPerPage };
  },
};

/** Where the walk ends: its start, or where it handed the rest of its range to another slice. */
function walkFloor(p: SearchSliceParams, sinceMs: number): number {
  return Math.max(sinceMs, p.stopBelowMs ?? sinceMs);
}

/**
 * Pages this walk expects after its next one: the range below the page's oldest tweet at the
 * density the walk met so far (from the top of its range over its pages; the page's own, when the
 * runner did not say how many came before), less the page fetched next (the runner fetches it
 * while this one commits). One page's density alone misjudged walks by half or double, and a
 * walk judged short waited behind its job's others for seconds.
 */
function remainingPagesBelow(p: SearchSliceParams, floor: number, oldest: number, newest: number, pagesBefore: number | undefined): number | undefined {
  let msPerPage: number;
  if (pagesBefore !== undefined && p.untilMs !== undefined && p.untilMs > oldest) {
    msPerPage = (p.untilMs - oldest) / (pagesBefore + 1);
  } else {
    if (!(newest > oldest)) return undefined;
    msPerPage = newest - oldest;
  }
  return Math.max(0, (oldest - floor) / msPerPage - 1);
}

/**
 * A dense slice hands the older half of what it still has to walk (down to `floor`) to a new
 * slice (the runner does it only while the job walks fewer slices than its target parallelism).
 */
function proposeSplit(p: SearchSliceParams, floor: number, oldest: number, newest: number): PageVerdict['split'] {
  const at = splitPoint(floor, oldest, newest - oldest);
  if (at === null) return undefined;
  const childParams: SearchSliceParams = { query: p.query, order: p.order, sinceMs: floor, untilMs: at };
  return { stopBelowMs: at, previousStopBelowMs: p.stopBelowMs ?? null, childParams };
}
