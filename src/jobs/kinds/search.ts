/**
 * Search backfill. A query over [since, until) is cut into a few time slices (exact id ranges,
 * see time-slices.ts) that walk in parallel; a slice that turns out dense hands the older half of
 * its remainder to a new slice until the job walks rate × latency slices at once. Without --since
 * the range has no known start: one slice walks newest-first until the service ends the walk,
 * --max-tweets or --max-requests.
 */
import { z } from 'zod';
import type { JobKind, PageVerdict, SliceHandler } from '../kind.ts';
import { checkSearchQuery, withOperators } from '../search-query.ts';
import { rangeOperators, splitPoint, splitRange, targetParallelism } from '../time-slices.ts';
import { maxTweetsStop } from './max-tweets.ts';
import { newestMs, oldestMs, tweetPage } from './pages.ts';

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD');

export const SearchJobParams = z
  .object({
    query: z.string().trim().min(1).max(512),
    order: z.enum(['latest', 'popular']).default('latest'),
    since: isoDate.optional(),
    until: isoDate.optional(),
    maxTweets: z.number().int().positive().optional(),
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
});
export type SearchSliceParams = z.infer<typeof SearchSliceParams>;

const dayMs = (date: string) => Date.parse(`${date}T00:00:00Z`);

/**
 * Refuses (InputError, before any request) a query this job cannot run as meant. Every slice adds
 * max_id: (the range always ends, at --until or now) and, with --since, since_id:.
 */
export function checkSearchJob(params: Pick<SearchJobParams, 'query' | 'since' | 'until'>): void {
  checkSearchQuery(params.query, {
    addedOperators: params.since ? 2 : 1,
    boundsTime: params.since !== undefined || params.until !== undefined,
  });
}

export const searchJob: JobKind<SearchJobParams> = {
  kind: 'search',
  params: SearchJobParams,
  priority: 'backfill',
  plan(params, ctx) {
    checkSearchJob(params);
    const untilMs = params.until ? dayMs(params.until) : ctx.now.getTime();
    const base = { query: params.query, order: params.order };
    if (!params.since) return [{ kind: 'search', params: { ...base, untilMs } }];
    // Start with a quarter of the target parallelism: a sparse query then costs a few requests,
    // and a dense one reaches the target within two pages as slices split (slice-runner).
    const initial = Math.ceil(targetParallelism(ctx.pooledRate, ctx.latencyMs) / 4);
    const ranges = splitRange({ sinceMs: dayMs(params.since), untilMs }, initial);
    return ranges.map((r) => ({ kind: 'search', params: { ...base, sinceMs: r.sinceMs, untilMs: r.untilMs } }));
  },
  stopAt: (params, progress) => maxTweetsStop(params.maxTweets, progress),
};

/** The slice's query: the user's, bracketed, then the slice's id bounds (see search-query.ts). */
export function sliceQuery(p: SearchSliceParams): string {
  return withOperators(p.query, rangeOperators({ sinceMs: p.sinceMs, untilMs: p.untilMs }));
}

export const searchSlice: SliceHandler<SearchSliceParams> = {
  kind: 'search',
  params: SearchSliceParams,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.searchTweets(
      { query: sliceQuery(p), order: p.order, ...(cursor ? { cursor } : {}) },
      { priority: ctx.priority, jobId: ctx.jobId, signal: ctx.signal },
    );
    return tweetPage('POST /v3/search-tweets', page);
  },
  afterPage(p, page) {
    const verdict: PageVerdict = {};
    const oldest = oldestMs(page.tweets);
    if (p.stopBelowMs !== undefined && p.order === 'latest' && oldest !== null && oldest < p.stopBelowMs) {
      verdict.stop = 'reached the range handed to another slice';
      return verdict;
    }
    const split = proposeSplit(p, page.tweets);
    if (split) verdict.split = split;
    return verdict;
  },
};

/**
 * A dense slice hands the older half of what it still has to walk to a new slice (the runner
 * does it only while the job walks fewer slices than its target parallelism).
 */
function proposeSplit(p: SearchSliceParams, tweets: Parameters<typeof oldestMs>[0]): PageVerdict['split'] {
  if (p.order !== 'latest' || p.sinceMs === undefined || tweets.length < 2) return undefined;
  const oldest = oldestMs(tweets);
  const newest = newestMs(tweets);
  if (oldest === null || newest === null) return undefined;
  // What this slice still has to walk: down to its own start, or to where it handed over before.
  const floor = Math.max(p.sinceMs, p.stopBelowMs ?? p.sinceMs);
  const at = splitPoint(floor, oldest, newest - oldest);
  if (at === null) return undefined;
  const childParams: SearchSliceParams = { query: p.query, order: p.order, sinceMs: floor, untilMs: at };
  return { stopBelowMs: at, previousStopBelowMs: p.stopBelowMs ?? null, childParams };
}
