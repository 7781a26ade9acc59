/**
 * The spec's v2 endpoints. Under the v2Gone quirk every /v2 path answers 410 naming its v3
 * counterpart (server.ts asks `v3CounterpartOf`).
 */
import { createHash } from 'node:crypto';
import type { RouteDef, SimContext } from './context.ts';
import { badRequest, listIdFromLink, notFound } from './http-utils.ts';
import { commentsPage, listTweetsPage, userTweetsPage } from './listings.ts';
import { pageBody } from './paging.ts';
import { cursorParam, optInt, optParam, reqParam, requirePublicUser, tweetFromParam, userByHandle, userFromParams } from './params.ts';
import { bulkTweetIndices, findReplyBy } from './routes-v3.ts';
import { renderBasicAccount, renderNewFollower, renderTweetV2 } from './render-v2.ts';
import { isListedUser } from './render-v3.ts';
import { plainTime } from './time-format.ts';

const V2_USER = { link: 'link', id: 'user_id' } as const;
const V2_CHECK_USER = { username: 'user_handle', id: 'user_id' } as const;
const V2_FOLLOWS_MAX = 200;
const DAY_MS = 24 * 3600 * 1000;

function tweetsBody(ctx: SimContext, field: string, page: { items: number[]; next: string | null }): Record<string, unknown> {
  return pageBody(ctx, field, page.items.map((i) => renderTweetV2(ctx, i)), page.next);
}

/** v3 path of each v2 path, for the 410 message. */
const COUNTERPARTS: Record<string, string> = {
  '/v2/comments': 'POST /v3/comments',
  '/v2/list-tweets': 'GET /v3/list-tweets',
  '/v2/user-tweets': 'POST /v3/user-tweets',
  '/v2/check-comment': 'GET /v3/check-comment',
  '/v2/tweet-info': 'POST /v3/tweet-info',
  '/v2/tweet-info-bulk': 'POST /v3/tweet-info-bulk',
  '/v2/info': 'GET /v3/info',
  '/v2/follows': 'GET /v3/follows',
  '/v2/new-following-7d': 'GET /v3/new-following-7d',
  '/v2/check-quoted': 'POST /v3/check-quoted',
};

export function v3CounterpartOf(path: string): string {
  const key = path.startsWith('/v2/info/') ? '/v2/info' : path;
  return COUNTERPARTS[key] ?? 'the /v3 API';
}

/** Follows in the v2 form: a bare array of up to 200, paged by `page` (1-based); a short page is the last. */
function follows(ctx: SimContext): unknown {
  const user = userFromParams(ctx, V2_USER);
  const orderBy = optParam(ctx, 'order_by');
  if (orderBy !== null && orderBy !== 'score') throw badRequest('order_by must be score');
  const page = optInt(ctx, 'page') ?? 1;
  if (page < 1) throw badRequest('page must be 1 or more');
  const users = ctx.world.users;
  let listed = ctx.world.followsOf(user.index).filter((ix) => isListedUser(users[ix]));
  if (orderBy === 'score') listed = [...listed].sort((a, b) => users[b]!.followersCount - users[a]!.followersCount || a - b);
  return listed.slice((page - 1) * V2_FOLLOWS_MAX, page * V2_FOLLOWS_MAX).map((ix) => renderBasicAccount(users[ix]!));
}

/**
 * The newest 5% of an account's followers (at most 200), dated deterministically within the last
 * seven days, newest first: the world records who follows whom, not when.
 */
function newFollowing(ctx: SimContext): unknown {
  const handle = optParam(ctx, 'user_handle');
  const user = handle !== null
    ? requirePublicUser(userByHandle(ctx, handle, 'user_handle'), handle)
    : userFromParams(ctx, { id: 'user_id' });
  const followers = ctx.world.followersOf(user.index);
  const n = Math.min(200, Math.ceil(followers.length * 0.05));
  const out: Array<{ at: number; ix: number }> = [];
  for (const ix of followers.slice(followers.length - n)) {
    if (!isListedUser(ctx.world.users[ix])) continue;
    const h = createHash('sha256').update(`${user.id}:${ix}`).digest().readUInt32BE(0);
    out.push({ at: ctx.nowMs - (h % (7 * DAY_MS)), ix });
  }
  out.sort((a, b) => b.at - a.at);
  return out.map((f) => renderNewFollower(ctx.world.users[f.ix]!, f.at));
}

function checkQuoted(ctx: SimContext): unknown {
  const index = tweetFromParam(ctx);
  const user = userFromParams(ctx, V2_CHECK_USER, { allowProtected: true });
  if (user.protected) return { date: null, status: 'not_found', text: null, user_protected: true };
  const t = ctx.world.tweets;
  const own = ctx.world.tweetsByAuthor(user.index);
  for (let k = own.length - 1; k >= 0; k--) {
    const j = own[k]!;
    if (t.quoted(j) === index) return { date: plainTime(t.createdAtMs(j)), status: 'quoted', text: t.text(j), user_protected: false };
    if (t.retweeted(j) === index) return { date: plainTime(t.createdAtMs(j)), status: 'retweeted', text: t.text(j), user_protected: false };
  }
  return { date: null, status: 'not_found', text: null, user_protected: false };
}

export const v2Routes: RouteDef[] = [
  {
    method: 'POST',
    path: '/v2/comments',
    empty: () => ({ comments: [], next_cursor: null }),
    handler: (ctx) => tweetsBody(ctx, 'comments', commentsPage(ctx, tweetFromParam(ctx), 'Recency', cursorParam(ctx), 'v2')),
  },
  {
    method: 'GET',
    path: '/v2/list-tweets',
    handler: (ctx) => {
      const id = listIdFromLink(reqParam(ctx, 'list_id'), 'list_id');
      if (!ctx.world.listById(id)) throw notFound(`list not found: ${id}`);
      return tweetsBody(ctx, 'tweets', listTweetsPage(ctx, id, cursorParam(ctx, 'cursor'), 'v2'));
    },
  },
  {
    method: 'POST',
    path: '/v2/user-tweets',
    empty: () => ({ tweets: [], next_cursor: null }),
    handler: (ctx) => tweetsBody(ctx, 'tweets', userTweetsPage(ctx, userFromParams(ctx, V2_USER), cursorParam(ctx, 'cursor'), 'v2')),
  },
  {
    method: 'GET',
    path: '/v2/check-comment',
    handler: (ctx) => {
      const index = tweetFromParam(ctx);
      const user = userFromParams(ctx, V2_CHECK_USER, { allowProtected: true });
      const reply = user.protected ? -1 : findReplyBy(ctx, user.index, index);
      const out: Record<string, unknown> = { commented: reply >= 0 };
      if (reply >= 0 || ctx.quirks.explicitNulls) out.tweet = reply >= 0 ? renderTweetV2(ctx, reply) : null;
      return out;
    },
  },
  { method: 'POST', path: '/v2/tweet-info', handler: (ctx) => renderTweetV2(ctx, tweetFromParam(ctx)) },
  {
    method: 'POST',
    path: '/v2/tweet-info-bulk',
    empty: () => [],
    handler: (ctx) => bulkTweetIndices(ctx, 'tweet_links').map((i) => renderTweetV2(ctx, i)),
  },
  {
    method: 'GET',
    path: '/v2/info/{handle}',
    handler: (ctx) => {
      const handle = ctx.params.handle ?? '';
      return renderBasicAccount(requirePublicUser(userByHandle(ctx, handle, 'user_handle'), handle));
    },
  },
  { method: 'GET', path: '/v2/follows', handler: follows },
  { method: 'GET', path: '/v2/new-following-7d', handler: newFollowing },
  {
    method: 'POST',
    path: '/v2/check-quoted',
    empty: () => ({ date: null, status: 'not_found', text: null, user_protected: false }),
    handler: checkQuoted,
  },
];
