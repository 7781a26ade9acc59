/**
 * The "other endpoints" the spec only names, with the methods, fields and shapes of production's
 * reference (service-production.md) in both profiles. Checks live in routes-checks.ts, account
 * analytics in routes-scores.ts.
 */
import type { RouteDef, SimContext } from './context.ts';
import { badRequest, handleFromProfileLink, isHandle, isNumericId } from './http-utils.ts';
import { engagementPage, searchUsersPage } from './listings.ts';
import { pageBody } from './paging.ts';
import { cursorParam, reqParam, requirePublicUser, tweetFromParam } from './params.ts';
import { expandedText, renderTweetV3, renderUserV3 } from './render-v3.ts';
import type { SimUser } from './model.ts';
import { isoTime } from './time-format.ts';

function infoBatch(ctx: SimContext): unknown {
  const split = (name: string): string[] => ctx.query.getAll(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const handles = split('usernames');
  const ids = split('user_ids');
  if (handles.length === 0 && ids.length === 0) throw badRequest('usernames or user_ids is required');
  if (handles.length + ids.length > 100) throw badRequest(`${handles.length + ids.length} users asked; at most 100 per request`);
  const users: SimUser[] = [];
  for (const h of handles) {
    if (!isHandle(h.replace(/^@/, ''))) throw badRequest(`not a handle: ${h}`);
    const u = ctx.world.userByHandle(h.replace(/^@/, ''));
    if (u && !u.protected && !u.suspended && !u.deleted) users.push(u);
  }
  for (const id of ids) {
    if (!isNumericId(id)) throw badRequest(`not a numeric user id: ${id}`);
    const u = ctx.world.userById(id);
    if (u && !u.protected && !u.suspended && !u.deleted) users.push(u);
  }
  return { users: users.map((u) => renderUserV3(ctx, u)) };
}

function retweeters(ctx: SimContext): unknown {
  const page = engagementPage(ctx, tweetFromParam(ctx), 'retweets', cursorParam(ctx));
  const users = page.items.map((j) => renderUserV3(ctx, ctx.world.users[ctx.world.tweets.author(j)]!));
  return pageBody(ctx, 'users', users, page.next);
}

/** A profile URL's user id. */
function linkToId(ctx: SimContext): unknown {
  const handle = handleFromProfileLink(reqParam(ctx, 'link'), 'link');
  return { id: requirePublicUser(ctx.world.userByHandle(handle), handle).id };
}

/** A tweet read as an article: its text, a preview, its first photo as the cover, its author. */
function article(ctx: SimContext): unknown {
  const i = tweetFromParam(ctx);
  const t = ctx.world.tweets;
  const text = ctx.quirks.expandedText ? expandedText(ctx.world, i) : t.text(i);
  const cover = t.media(i).find((m) => m.type === 'photo');
  return {
    full_text: text,
    preview_text: text.length > 140 ? `${text.slice(0, 139)}…` : text,
    cover_image_url: cover?.url ?? '',
    published_at: isoTime(t.createdAtMs(i)),
    likes_count: t.likes(i),
    retweet_count: t.retweets(i),
    reply_count: t.replies(i),
    quote_count: t.quotes(i),
    bookmark_count: t.bookmarks(i),
    views_count: t.views(i),
    author: renderUserV3(ctx, ctx.world.users[t.author(i)]!),
  };
}

export const otherRoutes: RouteDef[] = [
  { method: 'GET', path: '/v3/info-batch', handler: infoBatch },
  {
    method: 'POST',
    path: '/v3/quotes',
    empty: () => ({ tweets: [], next_cursor: null }),
    handler: (ctx) => {
      const page = engagementPage(ctx, tweetFromParam(ctx), 'quotes', cursorParam(ctx));
      return pageBody(ctx, 'tweets', page.items.map((i) => renderTweetV3(ctx, i)), page.next);
    },
  },
  // the spec's name; production's reference has only /retweeters
  { method: 'POST', path: '/v3/retweets', empty: () => ({ users: [], next_cursor: null }), handler: retweeters, when: (q) => q.retweetsPath },
  { method: 'POST', path: '/v3/retweeters', empty: () => ({ users: [], next_cursor: null }), handler: retweeters },
  {
    method: 'POST',
    path: '/v3/search-users',
    empty: () => ({ users: [], next_cursor: null }),
    handler: (ctx) => {
      const page = searchUsersPage(ctx, reqParam(ctx, 'query'), cursorParam(ctx));
      return pageBody(ctx, 'users', page.items.map((u) => renderUserV3(ctx, u)), page.next);
    },
  },
  {
    method: 'GET',
    path: '/v3/username-to-id/{handle}',
    handler: (ctx) => {
      const h = (ctx.params.handle ?? '').replace(/^@/, '');
      if (!isHandle(h)) throw badRequest('handle must be letters, digits or underscore, at most 15');
      return { id: requirePublicUser(ctx.world.userByHandle(h), h).id };
    },
  },
  {
    method: 'GET',
    path: '/v3/id-to-username/{id}',
    handler: (ctx) => {
      const id = ctx.params.id ?? '';
      if (!isNumericId(id)) throw badRequest('id must be a numeric user id');
      return { handle: requirePublicUser(ctx.world.userById(id), id).username };
    },
  },
  { method: 'GET', path: '/v3/link-to-id', handler: linkToId },
  { method: 'POST', path: '/v3/article', handler: article },
];
