/**
 * `--estimate`: what a job would cost, from a probe, before spending quota. Every probe is an
 * ordinary client call, so it takes its grant from the shared gate like every request
 * (ARCHITECTURE invariant 2); nothing is enqueued.
 *
 * Search: the probe reads the first page of each of four equal parts of the range (4 requests): a
 * part whose first page is also its last is counted exactly; otherwise its 20 newest tweets give
 * the density near its end, extrapolated over the part. Without --since the range has no start,
 * so only the rate near the newest is reported.
 *
 * The other kinds: one first page per walk (list: 3, replies: the tweet's reply count, user: the
 * profile's tweet count); a watch's cost per pass and per 30-day month follows from the density of
 * its first page at the given interval (a pass reads one page, plus one per 20 new tweets).
 */
import type { CanonicalTweet } from '../api-client/canonical.ts';
import type { ApiClient, Page } from '../api-client/index.ts';
import { BULK_SIZE } from './kinds/hydrate.ts';
import { mentionsQuery, type MentionsJobParams } from './kinds/mentions.ts';
import type { UserJobParams } from './kinds/user.ts';
import { newestMs, oldestMs } from './kinds/pages.ts';
import { checkSearchJob, initialSlices, searchUntilMs, type SearchJobParams } from './kinds/search.ts';
import { withOperators } from './search-query.ts';
import { rangeOperators, splitRange } from './time-slices.ts';

export const PROBE_PARTS = 4;
const DAY_MS = 86_400_000;

export interface SearchEstimate {
  /** Estimated tweets in the range, or null when the range has no start. */
  tweets: number | null;
  /** Slices the job would plan: each spends one request at least. */
  slices: number;
  /** Requests the backfill would spend (full pages plus each slice's last partial page; at least one a planned slice). */
  requests: number | null;
  /** Matching tweets per day near the newest end. */
  tweetsPerDayRecent: number;
  probeRequests: number;
  pageSize: number;
  /** True when every probed part ended on its first page: the count is exact. */
  exact: boolean;
  seconds: number | null;
  pooledRate: number;
  quotaLeft: number | null;
  quotaShare: number | null;
}

interface Part {
  sinceMs: number | undefined;
  untilMs: number;
}

export async function estimateSearch(
  deps: { client: ApiClient; pooledRate: number; latencyMs: number; quotaLeft: () => Promise<number | null> },
  params: SearchJobParams,
  now: Date,
): Promise<SearchEstimate> {
  checkSearchJob(params);
  const untilMs = searchUntilMs(params, now);
  const sinceMs = params.since ? Date.parse(`${params.since}T00:00:00Z`) : undefined;
  const parts: Part[] = sinceMs === undefined ? [{ sinceMs: undefined, untilMs }] : splitRange({ sinceMs, untilMs }, PROBE_PARTS);
  let tweets = 0;
  let exact = true;
  let pageSize = 0;
  let recentPerDay = 0;
  for (const [i, part] of parts.entries()) {
    const bounds = rangeOperators({ sinceMs: part.sinceMs, untilMs: part.untilMs });
    const page = await deps.client.searchTweets({ query: withOperators(params.query, bounds), order: 'latest' });
    const n = page.items.length;
    if (page.nextCursor !== null) pageSize = Math.max(pageSize, n);
    const oldest = Math.min(...page.items.map((t) => t.createdAt.getTime()));
    const spanMs = n > 0 ? Math.max(1, part.untilMs - oldest) : part.untilMs - (part.sinceMs ?? part.untilMs - DAY_MS);
    const perMs = n / spanMs;
    if (i === parts.length - 1) recentPerDay = page.nextCursor === null && part.sinceMs !== undefined ? n / ((part.untilMs - part.sinceMs) / DAY_MS) : perMs * DAY_MS;
    if (part.sinceMs === undefined) {
      exact = page.nextCursor === null;
      tweets = exact ? n : Number.NaN;
      continue;
    }
    if (page.nextCursor === null) tweets += n;
    else {
      exact = false;
      tweets += Math.max(n, Math.round(perMs * (part.untilMs - part.sinceMs)));
    }
  }
  const size = pageSize || 20;
  const known = Number.isFinite(tweets);
  // The slices the job plans (search.ts): each spends a request at least, a sparse range's whole
  // cost, and a dense one's each end in a partial last page.
  const pages = Math.ceil(tweets / size);
  // As the job plans them with this estimate (the spending gate hands it its pages).
  const initial = initialSlices({ pooledRate: deps.pooledRate, latencyMs: deps.latencyMs, ...(known ? { expectedPages: pages } : {}) });
  const slices = sinceMs === undefined ? 1 : Math.max(1, splitRange({ sinceMs, untilMs }, initial).length);
  const requests = known ? Math.max(slices, pages + Math.min(slices, pages)) : null;
  const quotaLeft = await deps.quotaLeft();
  return {
    tweets: known ? tweets : null,
    requests,
    tweetsPerDayRecent: Math.round(recentPerDay),
    probeRequests: parts.length,
    pageSize: size,
    exact: known && exact,
    slices,
    seconds: requests === null ? null : requests / deps.pooledRate,
    pooledRate: deps.pooledRate,
    quotaLeft,
    quotaShare: requests !== null && quotaLeft !== null && quotaLeft > 0 ? requests / quotaLeft : null,
  };
}

/** What `--estimate` prints for every kind: the requests, and the one-line basis of the figure. */
export interface JobEstimate {
  /** Requests the job (a watch: its first pass) would spend; null when nothing can tell. */
  requests: number | null;
  /** `requests` is a floor: some walk goes on past what the probe saw. */
  atLeast: boolean;
  /** Watches: requests per pass and per 30-day month at the interval. */
  watch: WatchCost | null;
  basis: string;
  probeRequests: number;
}

export interface WatchCost {
  everySeconds: number;
  perPass: number;
  perMonth: number;
}

export const MONTH_SECONDS = 30 * 86_400;
const PAGE = 20;
const plural = (n: number, word: string, words = `${word}s`) => `${n} ${n === 1 ? word : words}`;

/** A watch's passes in a 30-day month: each costs at least one request. Known without a probe. */
export const passesPerMonth = (everySeconds: number): number => Math.ceil(MONTH_SECONDS / everySeconds);

/** Pure: a pass reads one page, plus one per `pageSize` new tweets (the watermark ends it). */
export function watchCost(tweetsPerDay: number, everySeconds: number, pageSize = PAGE): WatchCost {
  const perPass = 1 + (tweetsPerDay * everySeconds) / 86_400 / pageSize;
  // Rounded, not ceiled: a pass of 1.0003 requests on average is ~1, and ~2 misread it.
  return { everySeconds, perPass: Math.max(1, Math.round(perPass)), perMonth: Math.ceil(passesPerMonth(everySeconds) * perPass) };
}

/** Tweets per day near the newest, from one newest-first page (0 under two tweets). */
export function densityPerDay(page: Page<CanonicalTweet>): number {
  const oldest = oldestMs(page.items);
  const newest = newestMs(page.items);
  if (page.items.length < 2 || oldest === null || newest === null) return 0;
  return ((page.items.length - 1) / Math.max(1, newest - oldest)) * DAY_MS;
}

/** Pages a walk of `items` costs: one at least (the page that says it is empty). */
const pagesFor = (items: number, pageSize = PAGE): number => Math.max(1, Math.ceil(items / pageSize));

/** Hydrate: one request per 100 distinct ids; no probe. */
export function estimateHydrate(ids: readonly string[]): JobEstimate {
  const n = new Set(ids).size;
  return { requests: Math.ceil(n / BULK_SIZE), atLeast: false, watch: null, basis: `${plural(n, 'distinct id')}, ${BULK_SIZE} a request`, probeRequests: 0 };
}

/** A list: the first page of its tweets, members and followers (3 requests). */
export async function estimateList(client: ApiClient, listId: string): Promise<JobEstimate> {
  const o = { priority: 'backfill' } as const;
  const walks = [
    ['tweets', await client.listTweets({ listId }, o)],
    ['members', await client.listMembers({ listId }, o)],
    ['followers', await client.listFollowers({ listLink: listId }, o)],
  ] as const;
  const more = walks.filter(([, p]) => p.nextCursor !== null).length;
  const basis = walks.map(([name, p]) => `${name} ${p.items.length}${p.nextCursor === null ? '' : '+'}`).join(', ');
  return {
    requests: walks.length + more,
    atLeast: more > 0,
    watch: null,
    basis: `first pages: ${basis} (+: the walk goes on; no endpoint tells a list's size)`,
    probeRequests: walks.length,
  };
}

/** Replies: the tweet's reply count (1 request); the listing and the conversation search each walk them. */
export async function estimateReplies(client: ApiClient, tweetId: string): Promise<JobEstimate> {
  const page = await client.tweetInfoBulk([tweetId], { priority: 'backfill' });
  const replies = page.items[0]?.replyCount ?? null;
  if (replies === null) return { requests: null, atLeast: false, watch: null, basis: 'the tweet was not returned, or carries no reply count', probeRequests: 1 };
  const root = page.items[0]?.conversationId ?? null;
  if (root !== null && root !== tweetId) {
    // A reply: its replies carry the root's conversation id, so only the listing finds them (repliesJob).
    return {
      requests: pagesFor(replies) + 1,
      atLeast: false,
      watch: null,
      basis: `${plural(replies, 'reply', 'replies')} (the tweet's count), ${PAGE} a page, walked by the listing; the tweet is itself a reply, so the conversation_id: search finds none of them (1 request, none when the tweet is stored)`,
      probeRequests: 1,
    };
  }
  // The conversation_id: search reads the whole thread, replies to the replies too, which the
  // tweet's count leaves out (a thread of 250 under 67 direct replies: ~8 estimated, 24 spent).
  return {
    requests: 2 * pagesFor(replies),
    atLeast: true,
    watch: null,
    basis: `${plural(replies, 'reply', 'replies')} (the tweet's count), ${PAGE} a page, walked twice (the listing and the conversation_id: search); the search also reads replies to replies, which no count gives`,
    probeRequests: 1,
  };
}

/** A user: the profile's tweet count (1 request); with --every also the timeline's first page. */
export async function estimateUser(client: ApiClient, params: UserJobParams): Promise<JobEstimate> {
  const o = { priority: 'backfill' } as const;
  const user = await client.info(params.target, o);
  const count = user.tweetsCount ?? null;
  const wanted = count === null ? null : Math.min(count, params.maxTweets ?? count);
  const requests = wanted === null ? null : 1 + pagesFor(wanted);
  if (params.everySeconds === undefined) {
    return { requests, atLeast: false, watch: null, basis: `${count === null ? 'tweet count unknown' : `${plural(count, 'tweet')} on the profile`}, ${PAGE} a page, plus the profile`, probeRequests: 1 };
  }
  const page = await client.userTweets({ ...params.target }, o);
  const perDay = densityPerDay(page);
  return {
    requests,
    atLeast: false,
    watch: watchCost(perDay, params.everySeconds),
    basis: `${count === null ? 'tweet count unknown' : `${plural(count, 'tweet')} on the profile`}; ~${Math.round(perDay)} tweets/day on the timeline's first page`,
    probeRequests: 2,
  };
}

/** Mentions: the first page (1 request) gives the density; a first pass reads back to --since (default 7 days). */
export async function estimateMentions(client: ApiClient, params: MentionsJobParams, now: Date): Promise<JobEstimate> {
  const page = await client.mentions(
    {
      query: params.handle,
      order: 'latest',
      ...(params.minLikes !== undefined ? { minLikes: params.minLikes } : {}),
      ...(params.minRetweets !== undefined ? { minRetweets: params.minRetweets } : {}),
      ...(params.minReplies !== undefined ? { minReplies: params.minReplies } : {}),
    },
    { priority: 'backfill' },
  );
  const perDay = densityPerDay(page);
  const floorMs = params.since ? Date.parse(`${params.since}T00:00:00Z`) : now.getTime() - 7 * DAY_MS;
  const days = Math.max(0, (now.getTime() - floorMs) / DAY_MS);
  const firstPass = page.nextCursor === null ? 1 : pagesFor(Math.round(perDay * days));
  return {
    requests: firstPass,
    atLeast: false,
    watch: params.everySeconds === undefined ? null : watchCost(perDay, params.everySeconds),
    basis: `first page of ${mentionsQuery(params)}: ${plural(page.items.length, 'tweet')}${page.nextCursor === null ? ' (all)' : `, ~${Math.round(perDay)}/day`}, over ${Math.round(days)} days back`,
    probeRequests: 1,
  };
}

/** A search job as one JobEstimate: the backfill's figure, and a keyword watch's cost from its recent density. */
export function searchJobEstimate(e: SearchEstimate, everySeconds: number | undefined): JobEstimate {
  return {
    requests: e.requests,
    atLeast: false,
    watch: everySeconds === undefined ? null : watchCost(e.tweetsPerDayRecent, everySeconds, e.pageSize),
    basis: e.tweets === null ? `~${e.tweetsPerDayRecent} tweets/day near the newest; the range has no start (--since)` : `${e.exact ? '' : '~'}${e.tweets} tweets in the range, ${e.pageSize} a page, plus each slice's last page (${plural(e.slices, 'slice')})`,
    probeRequests: e.probeRequests,
  };
}
