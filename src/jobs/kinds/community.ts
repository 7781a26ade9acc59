/**
 * A community: its members and its feed, two walks. With a query, a search inside the community
 * instead (its feed's tweets that match; members are not walked). With an interval, the feed (or
 * the search) is watched: the first pass reads all of it, later passes read newest-first and stop
 * at the watch's high-watermark (the newest tweet id an earlier pass stored), so a pass with
 * nothing new costs one request. The watch row (interval, watermark) lives in `watches`.
 */
import { z } from 'zod';
import type { ApiClient } from '../../api-client/client.ts';
import { createWatch } from '../../store/watches.ts';
import type { FetchedPage, JobKind, PageVerdict, SliceHandler, SliceSpec } from '../kind.ts';
import { checkSearchQuery } from '../search-query.ts';
import { numericId } from './ids.ts';
import { newestMs, noteEmptyFirstPage, oldestMs, tweetPage, userPage } from './pages.ts';

export const CommunityJobParams = z
  .object({
    communityId: numericId,
    /** Search inside the community (the search grammar); members are then not walked. */
    query: z.string().trim().min(1).max(512).optional(),
    /** Watch the feed (or the search): seconds between passes. */
    everySeconds: z.number().int().min(60).optional(),
  })
  .strict();
export type CommunityJobParams = z.infer<typeof CommunityJobParams>;

const MembersSliceParams = z.object({ communityId: numericId });
type MembersSliceParams = z.infer<typeof MembersSliceParams>;

export const CommunityFeedSliceParams = z.object({
  communityId: numericId,
  /** Only on `community-search` slices. */
  query: z.string().min(1).optional(),
  /** Newest id stored by earlier passes: the pass ends on reaching it. Absent: read the whole feed. */
  watermarkId: z.string().regex(/^\d+$/).nullable().optional(),
  /** Set on a watch's passes (finishSlice moves the watermark when a pass ends). */
  pass: z.number().int().positive().optional(),
});
export type CommunityFeedSliceParams = z.infer<typeof CommunityFeedSliceParams>;

/**
 * The search-query checks of search-query.ts: nesting, quotes, the service's operator limit. A
 * community search adds no operator of its own (a watch stops at its watermark by reading ids,
 * not with since_id:), and no --since/--until bounds it.
 */
export function checkCommunityJob(params: Pick<CommunityJobParams, 'query'>): void {
  if (params.query !== undefined) checkSearchQuery(params.query, { addedOperators: 0, boundsTime: false });
}

function feedSlice(params: CommunityJobParams, pass: { watermarkId: string | null; pass: number } | null): SliceSpec {
  return {
    kind: params.query === undefined ? 'community-tweets' : 'community-search',
    params: {
      communityId: params.communityId,
      ...(params.query === undefined ? {} : { query: params.query }),
      ...(pass ?? {}),
    } satisfies CommunityFeedSliceParams,
  };
}

export const communityJob: JobKind<CommunityJobParams> = {
  kind: 'community',
  params: CommunityJobParams,
  priority: 'backfill',
  plan(params) {
    checkCommunityJob(params);
    const feed = feedSlice(params, params.everySeconds === undefined ? null : { watermarkId: null, pass: 1 });
    if (params.query !== undefined) return [feed];
    return [{ kind: 'community-members', params: { communityId: params.communityId } }, feed];
  },
  async onCreate(tx, jobId, params) {
    if (params.everySeconds === undefined) return;
    // No identity: every community watch's first pass reads the whole feed (what a crawl of the
    // community promises), so it takes no watermark over from an earlier watch of the community.
    await createWatch(tx, { jobId, kind: 'community', handle: `community:${params.communityId}`, params, everySeconds: params.everySeconds });
  },
  async afterSubmit(queues, jobId, params) {
    if (params.everySeconds !== undefined) await queues.scheduleWatch(jobId, params.everySeconds * 1000);
  },
  passSlice(params, input) {
    return feedSlice(params, { watermarkId: input.watermarkId, pass: input.pass });
  },
};

export const communityMembersSlice: SliceHandler<MembersSliceParams> = {
  kind: 'community-members',
  params: MembersSliceParams,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.communityMembers(
      { communityLink: p.communityId, ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return userPage(
      'POST /v3/community-members',
      page,
      { kind: 'community_member', ownerId: p.communityId },
      'community_member',
    );
  },
  afterPage: noteEmptyFirstPage("the community's members"),
};

/** A watch pass ends at its watermark; an empty first page is worth a note. */
function afterFeedPage(p: CommunityFeedSliceParams, page: FetchedPage, info: { firstPage: boolean }): PageVerdict {
  const verdict: PageVerdict = {};
  if (info.firstPage && page.itemCount === 0 && p.watermarkId == null) {
    verdict.note = p.query === undefined ? "the community's feed was empty" : 'nothing in the community matched the query';
  }
  const watermark = p.watermarkId == null ? null : BigInt(p.watermarkId);
  if (watermark !== null && page.tweets.some((t) => BigInt(t.id) <= watermark)) verdict.stop = 'caught up with the previous pass';
  return verdict;
}

// Both walks ask for `latest` (newest first): a watch's stop at its watermark depends on it, and
// production's default order of community-search-tweets is not stated (the simulator: popular).
export const communityTweetsSlice: SliceHandler<CommunityFeedSliceParams> = {
  kind: 'community-tweets',
  params: CommunityFeedSliceParams,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.communityTweets(
      { communityId: p.communityId, order: 'latest', ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return tweetPage('POST /v3/community-tweets', page);
  },
  afterPage: afterFeedPage,
};

export const communitySearchSlice: SliceHandler<CommunityFeedSliceParams> = {
  kind: 'community-search',
  params: CommunityFeedSliceParams,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.communitySearchTweets(
      { communityLink: p.communityId, ...(p.query === undefined ? {} : { query: p.query }), order: 'latest', ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return tweetPage('POST /v3/community-search-tweets', page);
  },
  afterPage: afterFeedPage,
};

const DAY_MS = 86_400_000;

/** What `harvest community … --estimate` learns from one page of each walk. */
export interface CommunityEstimate {
  /** Tweets on the probed page; `exact` when that page ended the walk (else there are more). */
  tweets: { count: number; exact: boolean };
  /** Members likewise; null with --query (members are not walked). */
  members: { count: number; exact: boolean } | null;
  /** Tweets per day near the newest, from the probed page's span; null when it cannot tell (under two tweets, or exact). */
  tweetsPerDayRecent: number | null;
  /** Requests the job would spend, when both walks ended on their probe page. */
  requests: number | null;
  /** With --every: requests per day of the watch's passes (one per pass, plus a page per 20 new tweets). */
  watchRequestsPerDay: number | null;
  probeRequests: number;
}

/**
 * A probe of one page per walk (through the client, so through the gate), the way search
 * --estimate probes: no endpoint tells a community's size, so a walk that goes on past its first
 * page is reported as "more than" with the feed's recent rate, from which a watch's cost follows.
 */
export async function estimateCommunity(client: ApiClient, params: CommunityJobParams): Promise<CommunityEstimate> {
  checkCommunityJob(params);
  const feed =
    params.query === undefined
      ? await client.communityTweets({ communityId: params.communityId, order: 'latest' }, { priority: 'backfill' })
      : await client.communitySearchTweets({ communityLink: params.communityId, query: params.query, order: 'latest' }, { priority: 'backfill' });
  const members = params.query === undefined ? await client.communityMembers({ communityLink: params.communityId }, { priority: 'backfill' }) : null;
  const tweetsExact = feed.nextCursor === null;
  const oldest = oldestMs(feed.items);
  const newest = newestMs(feed.items);
  const perDay = !tweetsExact && feed.items.length >= 2 && oldest !== null && newest !== null ? ((feed.items.length - 1) / Math.max(1, newest - oldest)) * DAY_MS : null;
  const membersExact = members === null || members.nextCursor === null;
  const watchRequestsPerDay =
    params.everySeconds === undefined
      ? null
      : Math.ceil((DAY_MS / 1000 / params.everySeconds) * (1 + (perDay ?? 0) * (params.everySeconds / 86_400) / 20));
  return {
    tweets: { count: feed.items.length, exact: tweetsExact },
    members: members === null ? null : { count: members.items.length, exact: membersExact },
    tweetsPerDayRecent: perDay === null ? null : Math.round(perDay),
    requests: tweetsExact && membersExact ? 1 + (members === null ? 0 : 1) : null,
    watchRequestsPerDay,
    probeRequests: 1 + (members === null ? 0 : 1),
  };
}
