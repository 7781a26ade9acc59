/**
 * `harvest search … --estimate`: what a backfill would cost, from a probe, before spending quota.
 * The probe reads the first page of each of four equal parts of the range (4 requests, through
 * the shared gate like every request): a part whose first page is also its last is counted
 * exactly; otherwise its 20 newest tweets give the density near its end, extrapolated over the
 * part. Without --since the range has no start, so only the rate near the newest is reported.
 */
import type { ApiClient } from '../api-client/index.ts';
import { checkSearchJob, type SearchJobParams } from './kinds/search.ts';
import { withOperators } from './search-query.ts';
import { rangeOperators, splitRange, targetParallelism } from './time-slices.ts';

export const PROBE_PARTS = 4;
const DAY_MS = 86_400_000;

export interface SearchEstimate {
  /** Estimated tweets in the range, or null when the range has no start. */
  tweets: number | null;
  /** Requests the backfill would spend (full pages plus each slice's last partial page). */
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
  const untilMs = params.until ? Date.parse(`${params.until}T00:00:00Z`) : now.getTime();
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
  const slices = Math.max(1, targetParallelism(deps.pooledRate, deps.latencyMs));
  const requests = known ? Math.max(1, Math.ceil(tweets / size) + Math.min(slices, Math.ceil(tweets / size))) : null;
  const quotaLeft = await deps.quotaLeft();
  return {
    tweets: known ? tweets : null,
    requests,
    tweetsPerDayRecent: Math.round(recentPerDay),
    probeRequests: parts.length,
    pageSize: size,
    exact: known && exact,
    seconds: requests === null ? null : requests / deps.pooledRate,
    pooledRate: deps.pooledRate,
    quotaLeft,
    quotaShare: requests !== null && quotaLeft !== null && quotaLeft > 0 ? requests / quotaLeft : null,
  };
}
