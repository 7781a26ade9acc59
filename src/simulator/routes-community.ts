/**
 * Communities (production's reference; the spec has only community-members): the members, the
 * feed (`POST /v3/community-tweets`) and a search inside one community
 * (`POST /v3/community-search-tweets`). Served in both profiles.
 */
import type { RouteDef, SimContext } from './context.ts';
import { badRequest, communityIdFromLink, isNumericId, notFound } from './http-utils.ts';
import { PAGE_SIZE, usersPage } from './listings.ts';
import type { SimCommunity } from './model.ts';
import { keysetPageDesc, offsetPage, pageBody, paginate, type PageResult } from './paging.ts';
import { cursorParam, optParam, reqParam } from './params.ts';
import { isVisibleTweet, renderReducedUser, renderTweetV3 } from './render-v3.ts';
import { SearchQueryError, bindPlan, compileQuery, engagementScore } from './search/index.ts';

type Order = 'latest' | 'popular';

function communityOf(ctx: SimContext, id: string): SimCommunity {
  const community = ctx.world.communityById(id);
  if (!community) throw notFound(`community not found: ${id}`);
  return community;
}

function orderParam(ctx: SimContext, fallback: Order): Order {
  const o = optParam(ctx, 'order') ?? fallback;
  if (o !== 'latest' && o !== 'popular') throw badRequest('order must be latest or popular');
  return o;
}

/** The query's predicate (400 for a query the search grammar refuses), or null for none. */
function queryFilter(ctx: SimContext, query: string | null): ((i: number) => boolean) | null {
  if (query === null) return null;
  try {
    const bound = bindPlan(compileQuery(query), ctx.world, ctx.nowMs);
    return (i) => i >= bound.lo && i < bound.hi && bound.predicate(i);
  } catch (error) {
    if (error instanceof SearchQueryError) throw badRequest(error.message);
    throw error;
  }
}

/**
 * The feed newest first (keyset, so posts added during a walk never shift a page) or by the
 * search's popular score (likes + 2 × retweets + replies, ties newest first). Feeds are a few
 * hundred posts, so the popular order is sorted per page rather than cached.
 */
function feedPage(ctx: SimContext, community: SimCommunity, order: Order, query: string | null, scope: string): PageResult<number> {
  const matches = queryFilter(ctx, query);
  const visible = (i: number): boolean => isVisibleTweet(ctx.world, i) && (matches === null || matches(i));
  return paginate(ctx, { scope, kind: 'opaque', cursor: cursorParam(ctx), size: PAGE_SIZE }, (position, size) => {
    if (order === 'latest') return keysetPageDesc(community.tweets, position, size, visible);
    const t = ctx.world.tweets;
    const ranked = community.tweets.filter(visible).sort((a, b) => engagementScore(t, b) - engagementScore(t, a) || b - a);
    return offsetPage(ranked, position, size);
  });
}

function tweetsBody(ctx: SimContext, page: PageResult<number>): Record<string, unknown> {
  return pageBody(ctx, 'tweets', page.items.map((i) => renderTweetV3(ctx, i)), page.next);
}

const emptyTweets = (): unknown => ({ tweets: [], next_cursor: null });

export const communityRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/v3/community-members',
    empty: () => ({ users: [], next_cursor: null }),
    handler: (ctx) => {
      const community = communityOf(ctx, communityIdFromLink(reqParam(ctx, 'community_link'), 'community_link'));
      const id = community.id;
      const page = usersPage(ctx, community.members, { scope: `v3/community-members:${id}`, cursor: cursorParam(ctx), numeric: false, size: PAGE_SIZE });
      return pageBody(ctx, 'users', page.items.map(renderReducedUser), page.next);
    },
  },
  {
    method: 'POST',
    path: '/v3/community-tweets',
    empty: emptyTweets,
    handler: (ctx) => {
      const id = reqParam(ctx, 'community_id').trim();
      if (!isNumericId(id)) throw badRequest('community_id must be a numeric community id');
      const community = communityOf(ctx, id);
      const order = orderParam(ctx, 'latest');
      return tweetsBody(ctx, feedPage(ctx, community, order, null, `v3/community-tweets:${id}:${order}`));
    },
  },
  {
    method: 'POST',
    path: '/v3/community-search-tweets',
    empty: emptyTweets,
    handler: (ctx) => {
      const community = communityOf(ctx, communityIdFromLink(reqParam(ctx, 'community_link'), 'community_link'));
      const query = optParam(ctx, 'query');
      const order = orderParam(ctx, ctx.quirks.searchDefaultOrder);
      const scope = `v3/community-search-tweets:${community.id}:${order}:${query ?? ''}`;
      return tweetsBody(ctx, feedPage(ctx, community, order, query, scope));
    },
  },
];
