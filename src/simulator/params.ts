/**
 * Reading request parameters (query for GET, JSON body for POST) and resolving them to world
 * objects, with the service's statuses: 400 for missing or malformed, 404 for anything not public.
 */
import type { SimContext } from './context.ts';
import {
  badRequest,
  handleFromProfileLink,
  isHandle,
  isNumericId,
  notFound,
  tweetIdFromLink,
} from './http-utils.ts';
import type { SimUser } from './model.ts';
import { isVisibleTweet, isVisibleUser } from './render-v3.ts';

/** A string parameter, or null when absent or empty. Non-string body values are 400. */
export function optParam(ctx: SimContext, name: string): string | null {
  if (ctx.method === 'GET') {
    const v = ctx.query.get(name);
    return v === null || v === '' ? null : v;
  }
  const v = ctx.body[name];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw badRequest(`${name} must be a string`);
  return v;
}

export function reqParam(ctx: SimContext, name: string): string {
  const v = optParam(ctx, name);
  if (v === null) throw badRequest(`${name} is required`);
  return v;
}

/** A non-negative integer parameter (JSON number or decimal string), or null. */
export function optInt(ctx: SimContext, name: string): number | null {
  const raw = ctx.method === 'GET' ? ctx.query.get(name) : ctx.body[name];
  if (raw === undefined || raw === null || raw === '') return null;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^[0-9]{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw badRequest(`${name} must be a non-negative integer`);
  return n;
}

/** The cursor parameter (next_cursor in v3, cursor in some v2 routes). */
export function cursorParam(ctx: SimContext, name = 'next_cursor'): string | null {
  return optParam(ctx, name);
}

/** A user that exists and is public; 404 for protected, suspended, deleted and unknown. */
export function requirePublicUser(user: SimUser | undefined, what: string): SimUser {
  if (!isVisibleUser(user)) throw notFound(`user not found: ${what}`);
  return user;
}

/** A user whether public or protected (check endpoints report protection instead of 404). */
export function requireExistingUser(user: SimUser | undefined, what: string): SimUser {
  if (!user || user.suspended || user.deleted) throw notFound(`user not found: ${what}`);
  return user;
}

export function userByHandle(ctx: SimContext, handle: string, field: string): SimUser | undefined {
  const h = handle.startsWith('@') ? handle.slice(1) : handle;
  if (!isHandle(h)) throw badRequest(`${field} must be a handle (letters, digits, underscore; at most 15)`);
  return ctx.world.userByHandle(h);
}

export function userByIdParam(ctx: SimContext, id: string, field: string): SimUser | undefined {
  if (!isNumericId(id)) throw badRequest(`${field} must be a numeric user id`);
  return ctx.world.userById(id);
}

export interface UserParamNames {
  username?: string;
  id?: string;
  link?: string;
}

const V3_NAMES: UserParamNames = { username: 'username', id: 'user_id', link: 'user_link' };

/**
 * Resolves a user named by one of several parameters (by default username | user_id | user_link).
 * `exactlyOne` makes two given identifiers a 400 (GET /v3/info); otherwise the first given wins.
 */
export function userFromParams(
  ctx: SimContext,
  names: UserParamNames = V3_NAMES,
  options: { exactlyOne?: boolean; allowProtected?: boolean } = {},
): SimUser {
  const given: Array<[keyof UserParamNames, string, string]> = [];
  for (const kind of ['username', 'id', 'link'] as const) {
    const name = names[kind];
    if (!name) continue;
    const v = optParam(ctx, name);
    if (v !== null) given.push([kind, name, v]);
  }
  const list = Object.values(names).join(', ');
  if (given.length === 0) throw badRequest(`one of ${list} is required`);
  if (options.exactlyOne && given.length > 1) throw badRequest(`exactly one of ${list} must be given`);
  const [kind, name, value] = given[0]!;
  const user =
    kind === 'username'
      ? userByHandle(ctx, value, name)
      : kind === 'id'
        ? userByIdParam(ctx, value, name)
        : ctx.world.userByHandle(handleFromProfileLink(value, name));
  return options.allowProtected ? requireExistingUser(user, value) : requirePublicUser(user, value);
}

/** A public tweet's index from a tweet link or id parameter value; 404 when not public. */
export function tweetIndexFromValue(ctx: SimContext, value: string, field: string): number {
  const id = tweetIdFromLink(value, field);
  const index = ctx.world.tweets.indexOfId(BigInt(id));
  if (!isVisibleTweet(ctx.world, index)) throw notFound(`tweet not found: ${id}`);
  return index;
}

export function tweetFromParam(ctx: SimContext, field = 'tweet_link'): number {
  return tweetIndexFromValue(ctx, reqParam(ctx, field), field);
}
