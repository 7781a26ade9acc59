/**
 * The older /v2 endpoints. The production service retires /v2 (410); GoneError then names the v3
 * counterpart. Parameter names follow service-notes "Parameter names the spec leaves out".
 */
import { z } from 'zod';
import type { CanonicalTweet, CanonicalUser } from './canonical.ts';
import type { CallOptions, Execute } from './executor.ts';
import { bulkTweetsInput, cursorInput, handleInput, idOrLinkInput, linkInput, numericIdInput, userIdInput, validateInput } from './input.ts';
import { readArray, readOne, readPage, type Page } from './page.ts';
import { basicAccountReader, newFollowerReader, tweetV2Reader } from './readers.ts';
import { readCommentCheck, readQuoteCheck, type CommentCheck, type QuoteCheck } from './results.ts';

const commentsInput = z.object({ tweetLink: idOrLinkInput, cursor: cursorInput }).strict();
export type V2CommentsParams = z.input<typeof commentsInput>;

async function comments(execute: Execute, params: V2CommentsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(commentsInput, params, 'POST /v2/comments');
  const body: Record<string, string> = { tweet_link: p.tweetLink };
  if (p.cursor) body.next_cursor = p.cursor;
  return execute(
    { method: 'POST', route: '/v2/comments', body, read: (json) => readPage(json, ['comments'], tweetV2Reader) },
    options,
  );
}

const listTweetsInput = z.object({ listId: numericIdInput, cursor: cursorInput }).strict();
export type V2ListTweetsParams = z.input<typeof listTweetsInput>;

async function listTweets(execute: Execute, params: V2ListTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(listTweetsInput, params, 'GET /v2/list-tweets');
  return execute(
    {
      method: 'GET',
      route: '/v2/list-tweets',
      query: { list_id: p.listId, cursor: p.cursor },
      read: (json) => readPage(json, ['tweets'], tweetV2Reader),
    },
    options,
  );
}

const oneOf = (a: string, b: string) => (v: Record<string, unknown>) => (v[a] === undefined) !== (v[b] === undefined);

const userTweetsInput = z
  .object({ link: linkInput.optional(), userId: userIdInput.optional(), cursor: cursorInput })
  .strict()
  .refine(oneOf('link', 'userId'), 'give exactly one of link, userId');
export type V2UserTweetsParams = z.input<typeof userTweetsInput>;

async function userTweets(execute: Execute, params: V2UserTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(userTweetsInput, params, 'POST /v2/user-tweets');
  const body: Record<string, string> = {};
  if (p.link) body.link = p.link;
  if (p.userId) body.user_id = p.userId;
  if (p.cursor) body.cursor = p.cursor;
  return execute(
    { method: 'POST', route: '/v2/user-tweets', body, read: (json) => readPage(json, ['tweets'], tweetV2Reader) },
    options,
  );
}

const checkInput = z
  .object({ tweetLink: idOrLinkInput, userHandle: handleInput.optional(), userId: userIdInput.optional() })
  .strict()
  .refine(oneOf('userHandle', 'userId'), 'give exactly one of userHandle, userId');
export type V2CheckParams = z.input<typeof checkInput>;

async function checkComment(execute: Execute, params: V2CheckParams, options?: CallOptions): Promise<CommentCheck> {
  const p = validateInput(checkInput, params, 'GET /v2/check-comment');
  return execute(
    {
      method: 'GET',
      route: '/v2/check-comment',
      query: { tweet_link: p.tweetLink, user_handle: p.userHandle, user_id: p.userId },
      read: (json) => readCommentCheck(json, tweetV2Reader),
    },
    options,
  );
}

async function checkQuoted(execute: Execute, params: V2CheckParams, options?: CallOptions): Promise<QuoteCheck> {
  const p = validateInput(checkInput, params, 'POST /v2/check-quoted');
  const body: Record<string, string> = { tweet_link: p.tweetLink };
  if (p.userHandle) body.user_handle = p.userHandle;
  if (p.userId) body.user_id = p.userId;
  return execute({ method: 'POST', route: '/v2/check-quoted', body, read: readQuoteCheck }, options);
}

async function tweetInfo(execute: Execute, tweetLink: string, options?: CallOptions): Promise<CanonicalTweet> {
  const link = validateInput(idOrLinkInput, tweetLink, 'POST /v2/tweet-info');
  return execute(
    { method: 'POST', route: '/v2/tweet-info', body: { tweet_link: link }, read: (json) => readOne(json, tweetV2Reader) },
    options,
  );
}

async function tweetInfoBulk(execute: Execute, ids: readonly string[], options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const links = validateInput(bulkTweetsInput, ids, 'POST /v2/tweet-info-bulk');
  return execute(
    { method: 'POST', route: '/v2/tweet-info-bulk', body: { tweet_links: links }, read: (json) => readArray(json, tweetV2Reader) },
    options,
  );
}

async function info(execute: Execute, handle: string, options?: CallOptions): Promise<CanonicalUser> {
  const h = validateInput(handleInput, handle, 'GET /v2/info/{user_handle}');
  return execute(
    {
      method: 'GET',
      route: '/v2/info/{user_handle}',
      path: `/v2/info/${encodeURIComponent(h)}`,
      read: (json) => readOne(json, basicAccountReader),
    },
    options,
  );
}

const followsInput = z
  .object({ link: linkInput.optional(), userId: userIdInput.optional(), orderBy: z.literal('score').optional() })
  .strict()
  .refine(oneOf('link', 'userId'), 'give exactly one of link, userId');
export type V2FollowsParams = z.input<typeof followsInput>;

/** A bare array of up to 200 accounts; the spec shows no paging for it. */
async function follows(execute: Execute, params: V2FollowsParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(followsInput, params, 'GET /v2/follows');
  return execute(
    {
      method: 'GET',
      route: '/v2/follows',
      query: { link: p.link, user_id: p.userId, order_by: p.orderBy },
      read: (json) => readArray(json, basicAccountReader),
    },
    options,
  );
}

const newFollowingInput = z
  .object({ userHandle: handleInput.optional(), userId: userIdInput.optional() })
  .strict()
  .refine(oneOf('userHandle', 'userId'), 'give exactly one of userHandle, userId');
export type V2NewFollowingParams = z.input<typeof newFollowingInput>;

async function newFollowing7d(execute: Execute, params: V2NewFollowingParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(newFollowingInput, params, 'GET /v2/new-following-7d');
  return execute(
    {
      method: 'GET',
      route: '/v2/new-following-7d',
      query: { user_handle: p.userHandle, user_id: p.userId },
      read: (json) => readArray(json, newFollowerReader),
    },
    options,
  );
}

export interface V2Client {
  comments(params: V2CommentsParams, options?: CallOptions): Promise<Page<CanonicalTweet>>;
  listTweets(params: V2ListTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>>;
  userTweets(params: V2UserTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>>;
  checkComment(params: V2CheckParams, options?: CallOptions): Promise<CommentCheck>;
  tweetInfo(tweetLink: string, options?: CallOptions): Promise<CanonicalTweet>;
  tweetInfoBulk(ids: readonly string[], options?: CallOptions): Promise<Page<CanonicalTweet>>;
  info(handle: string, options?: CallOptions): Promise<CanonicalUser>;
  follows(params: V2FollowsParams, options?: CallOptions): Promise<Page<CanonicalUser>>;
  newFollowing7d(params: V2NewFollowingParams, options?: CallOptions): Promise<Page<CanonicalUser>>;
  checkQuoted(params: V2CheckParams, options?: CallOptions): Promise<QuoteCheck>;
}

export function createV2Client(execute: Execute): V2Client {
  return {
    comments: (params, options) => comments(execute, params, options),
    listTweets: (params, options) => listTweets(execute, params, options),
    userTweets: (params, options) => userTweets(execute, params, options),
    checkComment: (params, options) => checkComment(execute, params, options),
    tweetInfo: (tweetLink, options) => tweetInfo(execute, tweetLink, options),
    tweetInfoBulk: (ids, options) => tweetInfoBulk(execute, ids, options),
    info: (handle, options) => info(execute, handle, options),
    follows: (params, options) => follows(execute, params, options),
    newFollowing7d: (params, options) => newFollowing7d(execute, params, options),
    checkQuoted: (params, options) => checkQuoted(execute, params, options),
  };
}
