/** v3 endpoints that answer pages of full v3 users. */
import { z } from 'zod';
import type { CanonicalUser } from './canonical.ts';
import type { CallOptions, Execute } from './executor.ts';
import type { QueryParams } from './http.ts';
import {
  cursorInput,
  defined,
  handleInput,
  idOrLinkInput,
  numericIdInput,
  pagedUserInput,
  queryInput,
  userIdInput,
  userRefInput,
  validateInput,
} from './input.ts';
import { readOne, readPage, type Page } from './page.ts';
import { userV3Reader } from './readers.ts';

const USERS = ['users'] as const;

export type UserRef = z.input<typeof userRefInput>;

export async function info(execute: Execute, user: UserRef, options?: CallOptions): Promise<CanonicalUser> {
  const p = validateInput(userRefInput, user, 'GET /v3/info');
  return execute(
    {
      method: 'GET',
      route: '/v3/info',
      query: { username: p.username, user_id: p.userId, user_link: p.userLink },
      read: (json) => readOne(json, userV3Reader),
    },
    options,
  );
}

/** GET, query `{ [name]: id, next_cursor }`, answers `{users, next_cursor}`. */
function userPage(
  execute: Execute,
  route: string,
  query: QueryParams,
  options: CallOptions | undefined,
  cursor: 'string' | 'int64' = 'string',
): Promise<Page<CanonicalUser>> {
  const read = cursor === 'int64' ? (json: unknown) => endAtZero(readPage(json, USERS, userV3Reader)) : (json: unknown) => readPage(json, USERS, userV3Reader);
  return execute({ method: 'GET', route, query, read }, options);
}

/**
 * The listings whose request cursor the reference types int64 (followers, follows, list-members):
 * a next_cursor of "0" is the end, as in the platform's older int64-cursor API. Nothing in
 * production's reference says it answers one, but sent back it would cost a request for a page
 * that is not there.
 */
function endAtZero<T>(page: Page<T>): Page<T> {
  return page.nextCursor === '0' ? { ...page, nextCursor: null } : page;
}

const listLinkInput = z.object({ listLink: idOrLinkInput, cursor: cursorInput }).strict();
export type ListLinkParams = z.input<typeof listLinkInput>;

export async function listFollowers(execute: Execute, params: ListLinkParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(listLinkInput, params, 'GET /v3/list-followers');
  return userPage(execute, '/v3/list-followers', { list_link: p.listLink, next_cursor: p.cursor }, options);
}

const listIdInput = z.object({ listId: numericIdInput, cursor: cursorInput }).strict();
export type ListIdParams = z.input<typeof listIdInput>;

export async function listMembers(execute: Execute, params: ListIdParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(listIdInput, params, 'GET /v3/list-members');
  return userPage(execute, '/v3/list-members', { list_id: p.listId, next_cursor: p.cursor }, options, 'int64');
}

export type PagedUserParams = z.input<typeof pagedUserInput>;

function userGraph(route: string, cursor: 'string' | 'int64') {
  return async (execute: Execute, params: PagedUserParams, options?: CallOptions): Promise<Page<CanonicalUser>> => {
    const p = validateInput(pagedUserInput, params, `GET ${route}`);
    const query = { user_id: p.userId, username: p.username, user_link: p.userLink, next_cursor: p.cursor };
    return userPage(execute, route, query, options, cursor);
  };
}

/** Accounts the user follows, up to 200 a page; the request cursor is typed int64 in the reference. */
export const follows = userGraph('/v3/follows', 'int64');
/** The user's followers, up to 200 a page; the request cursor is typed int64 in the reference. */
export const followers = userGraph('/v3/followers', 'int64');
/** Verified followers; the request cursor is a string. */
export const verifiedFollowers = userGraph('/v3/verified-followers', 'string');

const infoBatchInput = z.union([
  z.object({ usernames: z.array(handleInput).min(1).max(100) }).strict(),
  z.object({ userIds: z.array(userIdInput).min(1).max(100) }).strict(),
]);
export type InfoBatchParams = z.input<typeof infoBatchInput>;

/** Up to 100 profiles; unknown or hidden accounts are absent from the answer. */
export async function infoBatch(execute: Execute, params: InfoBatchParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(infoBatchInput, params, 'GET /v3/info-batch');
  const query = 'usernames' in p ? { usernames: p.usernames } : { user_ids: p.userIds };
  return execute({ method: 'GET', route: '/v3/info-batch', query, read: (json) => readPage(json, USERS, userV3Reader) }, options);
}

const tweetUsersInput = z.object({ tweetLink: idOrLinkInput, cursor: cursorInput }).strict();
export type TweetUsersParams = z.input<typeof tweetUsersInput>;

/**
 * Accounts that retweeted a tweet, newest retweet first. Production's path is `/retweeters`
 * (the spec's `/retweets` is not in its reference).
 */
export async function retweeters(execute: Execute, params: TweetUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(tweetUsersInput, params, 'POST /v3/retweeters');
  return execute(
    {
      method: 'POST',
      route: '/v3/retweeters',
      body: defined({ tweet_link: p.tweetLink, next_cursor: p.cursor }),
      read: (json) => readPage(json, USERS, userV3Reader),
    },
    options,
  );
}

const searchUsersInput = z.object({ query: queryInput, cursor: cursorInput }).strict();
export type SearchUsersParams = z.input<typeof searchUsersInput>;

export async function searchUsers(execute: Execute, params: SearchUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(searchUsersInput, params, 'POST /v3/search-users');
  const body = defined({ query: p.query, next_cursor: p.cursor });
  return execute({ method: 'POST', route: '/v3/search-users', body, read: (json) => readPage(json, USERS, userV3Reader) }, options);
}
