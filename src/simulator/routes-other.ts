/**
 * The "other endpoints" the spec only names. Shapes follow service-notes where it describes them
 * and are otherwise minimal inventions, documented in docs/simulator.md.
 */
import { createHash } from 'node:crypto';
import type { RouteDef, SimContext } from './context.ts';
import { badRequest, classifyLink, communityIdFromLink, isHandle, isNumericId, notFound } from './http-utils.ts';
import { engagementPage, searchUsersPage } from './listings.ts';
import { pageBody } from './paging.ts';
import { cursorParam, reqParam, requirePublicUser, tweetFromParam, userFromParams } from './params.ts';
import { renderTweetV3, renderUserV3, v3Time } from './render-v3.ts';
import type { SimUser } from './model.ts';

const TARGET = { username: 'target_username', id: 'target_user_id', link: 'target_user_link' } as const;

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

function linkToId(ctx: SimContext): unknown {
  const link = reqParam(ctx, 'link');
  const found = classifyLink(link);
  if (!found) throw badRequest('link must be a profile, tweet, list, community or space URL');
  if (found.kind !== 'user') return { id: found.ref, type: found.kind };
  const user = requirePublicUser(ctx.world.userByHandle(found.ref), found.ref);
  return { id: user.id, type: 'user' };
}

/** A stable pseudo-country from the profile's location text (the world has no countries). */
const COUNTRIES = ['United States', 'United Kingdom', 'Germany', 'France', 'Japan', 'Brazil', 'India', 'Canada'] as const;

function digest(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
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
  { method: 'POST', path: '/v3/retweets', empty: () => ({ users: [], next_cursor: null }), handler: retweeters },
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
  {
    method: 'GET',
    path: '/v3/check-follow',
    handler: (ctx) => {
      const user = userFromParams(ctx, undefined, { allowProtected: true });
      const target = userFromParams(ctx, TARGET, { allowProtected: true });
      const hidden = user.protected || target.protected;
      return {
        follows: !hidden && ctx.world.followsOf(user.index).includes(target.index),
        followed_by: !hidden && ctx.world.followsOf(target.index).includes(user.index),
        user_protected: user.protected,
      };
    },
  },
  {
    method: 'GET',
    path: '/v3/check-retweet',
    handler: (ctx) => {
      const index = tweetFromParam(ctx);
      const user = userFromParams(ctx, undefined, { allowProtected: true });
      const retweeted = !user.protected && ctx.world.tweetsByAuthor(user.index).some((j) => ctx.world.tweets.retweeted(j) === index);
      return { retweeted, user_protected: user.protected };
    },
  },
  {
    method: 'GET',
    path: '/v3/check-community-member',
    handler: (ctx) => {
      const id = communityIdFromLink(reqParam(ctx, 'community_link'), 'community_link');
      const community = ctx.world.communityById(id);
      if (!community) throw notFound(`community not found: ${id}`);
      const user = userFromParams(ctx, undefined, { allowProtected: true });
      return { is_member: community.members.includes(user.index), user_protected: user.protected };
    },
  },
  {
    method: 'GET',
    path: '/v3/about',
    handler: (ctx) => {
      const user = userFromParams(ctx);
      const country = user.location === '' ? null : COUNTRIES[digest(user.location) % COUNTRIES.length]!;
      return { id: user.id, username: user.username, country, location: user.location, created_at: v3Time(ctx, user.createdAtMs) };
    },
  },
  {
    method: 'GET',
    path: '/v3/score',
    handler: (ctx) => {
      const user = userFromParams(ctx);
      const score = Math.round(Math.log10(1 + user.followersCount) * 100 + (user.verified ? 50 : 0)) / 10;
      return { id: user.id, username: user.username, score };
    },
  },
  {
    method: 'GET',
    path: '/v3/article',
    handler: (ctx) => {
      const i = tweetFromParam(ctx);
      const t = ctx.world.tweets;
      const text = t.text(i);
      return {
        id: t.idString(i),
        title: text.split(/[.!?\n]/, 1)[0]!.slice(0, 80),
        full_text: text,
        created_at: v3Time(ctx, t.createdAtMs(i)),
        likes_count: t.likes(i),
        retweet_count: t.retweets(i),
        reply_count: t.replies(i),
        quote_count: t.quotes(i),
        bookmark_count: t.bookmarks(i),
        view_count: t.views(i),
        user: renderUserV3(ctx, ctx.world.users[t.author(i)]!),
      };
    },
  },
];
