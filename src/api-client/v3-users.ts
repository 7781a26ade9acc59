/** v3 endpoints that answer users, spaces, usage and identifier conversions. */
import { z } from 'zod';
import type { CanonicalUser } from './canonical.ts';
import type { CallOptions, Execute } from './executor.ts';
import {
  cursorInput,
  handleInput,
  idOrLinkInput,
  linkInput,
  numericIdInput,
  pagedUserInput,
  queryInput,
  userIdInput,
  userRefInput,
  validateInput,
} from './input.ts';
import { readOne, readPage, type Page } from './page.ts';
import { reducedUserReader, userV3Reader } from './readers.ts';
import { readSpace, readUsage, type KeyUsage, type Space } from './results.ts';
import { handleAnswerSchema, idAnswerSchema } from './schemas/misc.ts';
import { spaceIdSchema } from './schemas/space.ts';

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
  query: Record<string, string | undefined>,
  options: CallOptions | undefined,
): Promise<Page<CanonicalUser>> {
  return execute({ method: 'GET', route, query, read: (json) => readPage(json, USERS, userV3Reader) }, options);
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
  return userPage(execute, '/v3/list-members', { list_id: p.listId, next_cursor: p.cursor }, options);
}

export type PagedUserParams = z.input<typeof pagedUserInput>;

function userGraph(route: string) {
  return async (execute: Execute, params: PagedUserParams, options?: CallOptions): Promise<Page<CanonicalUser>> => {
    const p = validateInput(pagedUserInput, params, `GET ${route}`);
    const query = { user_id: p.userId, username: p.username, user_link: p.userLink, next_cursor: p.cursor };
    return userPage(execute, route, query, options);
  };
}

/** Accounts the user follows, up to 200 a page. */
export const follows = userGraph('/v3/follows');
export const followers = userGraph('/v3/followers');
export const verifiedFollowers = userGraph('/v3/verified-followers');

const communityInput = z.object({ communityLink: idOrLinkInput, cursor: cursorInput }).strict();
export type CommunityParams = z.input<typeof communityInput>;

export async function communityMembers(execute: Execute, params: CommunityParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(communityInput, params, 'POST /v3/community-members');
  const body: Record<string, string> = { community_link: p.communityLink };
  if (p.cursor) body.next_cursor = p.cursor;
  return execute(
    { method: 'POST', route: '/v3/community-members', body, read: (json) => readPage(json, USERS, reducedUserReader) },
    options,
  );
}

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

/** Accounts that retweeted a tweet. */
export async function retweets(execute: Execute, params: TweetUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(tweetUsersInput, params, 'POST /v3/retweets');
  const body: Record<string, string> = { tweet_link: p.tweetLink };
  if (p.cursor) body.next_cursor = p.cursor;
  return execute({ method: 'POST', route: '/v3/retweets', body, read: (json) => readPage(json, USERS, userV3Reader) }, options);
}

const searchUsersInput = z.object({ query: queryInput, cursor: cursorInput }).strict();
export type SearchUsersParams = z.input<typeof searchUsersInput>;

export async function searchUsers(execute: Execute, params: SearchUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(searchUsersInput, params, 'POST /v3/search-users');
  const body: Record<string, string> = { query: p.query };
  if (p.cursor) body.next_cursor = p.cursor;
  return execute({ method: 'POST', route: '/v3/search-users', body, read: (json) => readPage(json, USERS, userV3Reader) }, options);
}

const placeInput = z.union([z.object({ id: spaceIdSchema }).strict(), z.object({ link: linkInput }).strict()]);
export type PlaceParams = z.input<typeof placeInput>;

export async function place(execute: Execute, params: PlaceParams, options?: CallOptions): Promise<Space> {
  const p = validateInput(placeInput, params, 'GET /v3/place');
  const query = 'id' in p ? { id: p.id } : { link: p.link };
  return execute({ method: 'GET', route: '/v3/place', query, read: readSpace }, options);
}

export async function keyUsageInfo(execute: Execute, options?: CallOptions): Promise<KeyUsage> {
  return execute({ method: 'GET', route: '/v3/key-usage-info', read: readUsage }, options);
}

export async function usernameToId(execute: Execute, handle: string, options?: CallOptions): Promise<string> {
  const h = validateInput(handleInput, handle, 'GET /v3/username-to-id/{handle}');
  return execute(
    {
      method: 'GET',
      route: '/v3/username-to-id/{handle}',
      path: `/v3/username-to-id/${encodeURIComponent(h)}`,
      read: (json) => readOne(json, { schema: idAnswerSchema, normalize: (a) => a.id }),
    },
    options,
  );
}

export async function idToUsername(execute: Execute, userId: string, options?: CallOptions): Promise<string> {
  const id = validateInput(userIdInput, userId, 'GET /v3/id-to-username/{id}');
  return execute(
    {
      method: 'GET',
      route: '/v3/id-to-username/{id}',
      path: `/v3/id-to-username/${id}`,
      read: (json) => readOne(json, { schema: handleAnswerSchema, normalize: (handle) => handle }),
    },
    options,
  );
}

export async function linkToId(execute: Execute, link: string, options?: CallOptions): Promise<string> {
  const l = validateInput(linkInput, link, 'GET /v3/link-to-id');
  return execute(
    {
      method: 'GET',
      route: '/v3/link-to-id',
      query: { link: l },
      read: (json) => readOne(json, { schema: idAnswerSchema, normalize: (a) => a.id }),
    },
    options,
  );
}
