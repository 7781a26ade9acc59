/** The spec's v3 endpoints and the v3 counterparts of the v2-only ones (service-notes). */
import type { RouteDef, SimContext } from './context.ts';
import { badRequest, listIdFromLink, notFound, spaceIdFromLink } from './http-utils.ts';
import {
  GRAPH_PAGE_SIZE,
  commentsPage,
  listTweetsPage,
  searchPage,
  userTweetsPage,
  usersPage,
  type CommentOrder,
} from './listings.ts';
import { pageBody } from './paging.ts';
import { cursorParam, optInt, optParam, reqParam, tweetFromParam, tweetIndexFromValue, userFromParams } from './params.ts';
import { renderSpace, renderTweetV3, renderUserV3 } from './render-v3.ts';

const emptyTweets = (): unknown => ({ tweets: [], next_cursor: null });

function tweetsBody(ctx: SimContext, field: string, page: { items: number[]; next: string | null }): Record<string, unknown> {
  return pageBody(ctx, field, page.items.map((i) => renderTweetV3(ctx, i)), page.next);
}

/** Search's default order is the profile's; mentions are newest first by default in both. */
function order(ctx: SimContext, fallback: 'latest' | 'popular' = ctx.quirks.searchDefaultOrder): 'latest' | 'popular' {
  const o = optParam(ctx, 'order') ?? fallback;
  if (o !== 'latest' && o !== 'popular') throw badRequest('order must be latest or popular');
  return o;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

function dateParam(ctx: SimContext, name: string): string | null {
  const v = optParam(ctx, name);
  if (v === null) return null;
  if (!DATE_RE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`))) throw badRequest(`${name} must be a date YYYY-MM-DD`);
  return v;
}

function mentions(ctx: SimContext): unknown {
  const handle = reqParam(ctx, 'query').replace(/^@/, '');
  userFromParams(ctx, { username: 'query' });
  const terms = [`@${handle}`];
  const since = dateParam(ctx, 'since_date');
  const until = dateParam(ctx, 'until_date');
  if (since) terms.push(`since:${since}`);
  if (until) terms.push(`until:${until}`);
  const minimums: Array<[string, string]> = [
    ['min_likes', 'min_faves'],
    ['min_retweets', 'min_retweets'],
    ['min_replies', 'min_replies'],
  ];
  for (const [field, op] of minimums) {
    const n = optInt(ctx, field);
    if (n !== null) terms.push(`${op}:${n}`);
  }
  const query = terms.join(' ');
  const o = order(ctx, 'latest');
  return tweetsBody(ctx, 'tweets', searchPage(ctx, query, o, cursorParam(ctx), `v3/mentions:${o}:${query.toLowerCase()}`));
}

function listFromParam(ctx: SimContext, name: string): string {
  const id = listIdFromLink(reqParam(ctx, name), name);
  if (!ctx.world.listById(id)) throw notFound(`list not found: ${id}`);
  return id;
}

export function userGraphBody(ctx: SimContext, kind: 'followers' | 'follows' | 'verified-followers'): unknown {
  const user = userFromParams(ctx);
  const source = kind === 'follows' ? ctx.world.followsOf(user.index) : ctx.world.followersOf(user.index);
  const page = usersPage(ctx, source, {
    scope: `v3/${kind}:${user.id}`,
    cursor: cursorParam(ctx),
    numeric: true,
    size: GRAPH_PAGE_SIZE,
    ...(kind === 'verified-followers' ? { filter: (u) => u.verified || u.blueVerified } : {}),
  });
  // the reference types the followers/follows cursor int64; verified-followers takes a string
  return pageBody(ctx, 'users', page.items.map((u) => renderUserV3(ctx, u)), page.next, kind !== 'verified-followers');
}

/** Bulk lookups: up to 100 per request; unknown or non-public ones are left out of the answer. */
export function bulkTweetIndices(ctx: SimContext, field: string): number[] {
  const raw = ctx.body[field];
  if (!Array.isArray(raw) || raw.length === 0) throw badRequest(`${field} must be a non-empty array of tweet links or ids`);
  if (raw.length > 100) throw badRequest(`${field} holds ${raw.length} items; at most 100 per request`);
  const out: number[] = [];
  for (const v of raw) {
    if (typeof v !== 'string') throw badRequest(`${field} must hold strings`);
    try {
      out.push(tweetIndexFromValue(ctx, v, field));
    } catch (error) {
      if (!(error instanceof Error && 'status' in error && error.status === 404)) throw error;
    }
  }
  return out;
}

const COMMENT_ORDERS: readonly CommentOrder[] = ['Relevance', 'Recency', 'Likes'];

export const v3Routes: RouteDef[] = [
  {
    method: 'GET',
    path: '/v3/info',
    handler: (ctx) => renderUserV3(ctx, userFromParams(ctx, undefined, { exactlyOne: true })),
  },
  {
    method: 'POST',
    path: '/v3/search-tweets',
    empty: emptyTweets,
    handler: (ctx) => {
      const query = reqParam(ctx, 'query');
      const o = order(ctx);
      return tweetsBody(ctx, 'tweets', searchPage(ctx, query, o, cursorParam(ctx), `v3/search:${o}:${query}`));
    },
  },
  { method: 'POST', path: '/v3/mentions', empty: emptyTweets, handler: mentions },
  {
    method: 'POST',
    path: '/v3/user-tweets',
    empty: emptyTweets,
    handler: (ctx) => tweetsBody(ctx, 'tweets', userTweetsPage(ctx, userFromParams(ctx), cursorParam(ctx), 'v3')),
  },
  {
    method: 'GET',
    path: '/v3/list-followers',
    handler: (ctx) => {
      const list = ctx.world.listById(listFromParam(ctx, 'list_link'))!;
      const page = usersPage(ctx, list.followers, { scope: `v3/list-followers:${list.id}`, cursor: cursorParam(ctx), numeric: false, size: 20 });
      return pageBody(ctx, 'users', page.items.map((u) => renderUserV3(ctx, u)), page.next);
    },
  },
  {
    method: 'GET',
    path: '/v3/list-members',
    handler: (ctx) => {
      const list = ctx.world.listById(listFromParam(ctx, 'list_id'))!;
      const page = usersPage(ctx, list.members, { scope: `v3/list-members:${list.id}`, cursor: cursorParam(ctx), numeric: true, size: 20 });
      return pageBody(ctx, 'users', page.items.map((u) => renderUserV3(ctx, u)), page.next, true);
    },
  },
  {
    method: 'GET',
    path: '/v3/place',
    handler: (ctx) => {
      const id = optParam(ctx, 'id');
      const link = optParam(ctx, 'link');
      if (id === null && link === null) throw badRequest('one of id, link is required');
      const spaceId = id ?? spaceIdFromLink(link!, 'link');
      const space = ctx.world.spaceById(spaceId);
      if (!space) throw notFound(`space not found: ${spaceId}`);
      return renderSpace(ctx, space);
    },
  },
  {
    method: 'GET',
    path: '/v3/key-usage-info',
    handler: (ctx) => {
      const usage = ctx.keys.usage(ctx.key);
      if (!ctx.quirks.usageAllotment) return usage;
      // production's reading: key_requests = the period's allotment, total_requests = used
      return { ...usage, key_requests: usage.total_requests, total_requests: usage.key_requests };
    },
  },
  {
    method: 'GET',
    path: '/v3/list-tweets',
    handler: (ctx) => tweetsBody(ctx, 'tweets', listTweetsPage(ctx, listFromParam(ctx, 'list_id'), cursorParam(ctx), 'v3')),
  },
  {
    method: 'POST',
    path: '/v3/comments',
    empty: emptyTweets,
    handler: (ctx) => {
      const index = tweetFromParam(ctx);
      const o = (optParam(ctx, 'order_by') ?? 'Relevance') as CommentOrder;
      if (!COMMENT_ORDERS.includes(o)) throw badRequest('order_by must be Relevance, Recency or Likes');
      // v3 names the replies `tweets` (v2: `comments`)
      return tweetsBody(ctx, 'tweets', commentsPage(ctx, index, o, cursorParam(ctx), 'v3'));
    },
  },
  { method: 'POST', path: '/v3/tweet-info', handler: (ctx) => renderTweetV3(ctx, tweetFromParam(ctx)) },
  {
    method: 'POST',
    path: '/v3/tweet-info-bulk',
    empty: () => ({ tweets: [] }),
    handler: (ctx) => ({ tweets: bulkTweetIndices(ctx, 'tweet_links').map((i) => renderTweetV3(ctx, i)) }),
  },
  { method: 'GET', path: '/v3/follows', handler: (ctx) => userGraphBody(ctx, 'follows') },
  { method: 'GET', path: '/v3/followers', handler: (ctx) => userGraphBody(ctx, 'followers') },
  { method: 'GET', path: '/v3/verified-followers', handler: (ctx) => userGraphBody(ctx, 'verified-followers') },
  {
    method: 'GET',
    path: '/v3/check-comment',
    handler: (ctx) => {
      const index = tweetFromParam(ctx);
      const user = userFromParams(ctx, undefined, { allowProtected: true });
      // a protected account's replies are not public: the check reports the protection instead
      const reply = user.protected ? -1 : findReplyBy(ctx, user.index, index);
      const out: Record<string, unknown> = { commented: reply >= 0 };
      if (reply >= 0 || ctx.quirks.explicitNulls) out.tweet = reply >= 0 ? renderTweetV3(ctx, reply) : null;
      return out;
    },
  },
];

/** The user's newest reply under the tweet, or -1. */
export function findReplyBy(ctx: SimContext, userIndex: number, tweetIndex: number): number {
  const own = ctx.world.tweetsByAuthor(userIndex);
  for (let k = own.length - 1; k >= 0; k--) {
    const j = own[k]!;
    if (ctx.world.tweets.inReplyTo(j) === tweetIndex) return j;
  }
  return -1;
}
