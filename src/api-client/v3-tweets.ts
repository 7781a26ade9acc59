/** v3 endpoints that answer tweets: pages of them, or one (community feeds are in v3-community.ts). */
import { z } from 'zod';
import type { CanonicalTweet } from './canonical.ts';
import type { CallOptions, Execute } from './executor.ts';
import {
  bulkTweetsInput,
  countInput,
  cursorInput,
  dateInput,
  defined,
  handleInput,
  idOrLinkInput,
  numericIdInput,
  orderInput,
  pagedUserInput,
  queryInput,
  validateInput,
} from './input.ts';
import { readOne, readPage, type Page } from './page.ts';
import { tweetV3Reader } from './readers.ts';

const TWEETS = ['tweets'] as const;

const searchInput = z.object({ query: queryInput, order: orderInput.optional(), cursor: cursorInput }).strict();
export type SearchTweetsParams = z.input<typeof searchInput>;

export async function searchTweets(execute: Execute, params: SearchTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(searchInput, params, 'POST /v3/search-tweets');
  return execute(
    {
      method: 'POST',
      route: '/v3/search-tweets',
      body: defined({ query: p.query, order: p.order, next_cursor: p.cursor }),
      read: (json) => readPage(json, TWEETS, tweetV3Reader),
    },
    options,
  );
}

const mentionsInput = z
  .object({
    query: handleInput,
    order: orderInput.optional(),
    sinceDate: dateInput.optional(),
    untilDate: dateInput.optional(),
    minLikes: countInput.optional(),
    minRetweets: countInput.optional(),
    minReplies: countInput.optional(),
    cursor: cursorInput,
  })
  .strict();
export type MentionsParams = z.input<typeof mentionsInput>;

export async function mentions(execute: Execute, params: MentionsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(mentionsInput, params, 'POST /v3/mentions');
  return execute(
    {
      method: 'POST',
      route: '/v3/mentions',
      body: defined({
        query: p.query,
        order: p.order,
        since_date: p.sinceDate,
        until_date: p.untilDate,
        min_likes: p.minLikes,
        min_retweets: p.minRetweets,
        min_replies: p.minReplies,
        next_cursor: p.cursor,
      }),
      read: (json) => readPage(json, TWEETS, tweetV3Reader),
    },
    options,
  );
}

export type UserTweetsParams = z.input<typeof pagedUserInput>;

export async function userTweets(execute: Execute, params: UserTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(pagedUserInput, params, 'POST /v3/user-tweets');
  return execute(
    {
      method: 'POST',
      route: '/v3/user-tweets',
      body: defined({ user_id: p.userId, username: p.username, user_link: p.userLink, next_cursor: p.cursor }),
      read: (json) => readPage(json, TWEETS, tweetV3Reader),
    },
    options,
  );
}

const listTweetsInput = z.object({ listId: numericIdInput, cursor: cursorInput }).strict();
export type ListTweetsParams = z.input<typeof listTweetsInput>;

export async function listTweets(execute: Execute, params: ListTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(listTweetsInput, params, 'GET /v3/list-tweets');
  return execute(
    {
      method: 'GET',
      route: '/v3/list-tweets',
      query: { list_id: p.listId, next_cursor: p.cursor },
      read: (json) => readPage(json, TWEETS, tweetV3Reader),
    },
    options,
  );
}

const commentsInput = z
  .object({ tweetLink: idOrLinkInput, cursor: cursorInput, orderBy: z.enum(['Relevance', 'Recency', 'Likes']).optional() })
  .strict();
export type CommentsParams = z.input<typeof commentsInput>;

export async function comments(execute: Execute, params: CommentsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(commentsInput, params, 'POST /v3/comments');
  return execute(
    {
      method: 'POST',
      route: '/v3/comments',
      body: defined({ tweet_link: p.tweetLink, next_cursor: p.cursor, order_by: p.orderBy }),
      // v3 answers `tweets`; `comments` (v2's name) is accepted in case the service keeps it.
      read: (json) => readPage(json, ['tweets', 'comments'], tweetV3Reader),
    },
    options,
  );
}

const tweetPagedInput = z.object({ tweetLink: idOrLinkInput, cursor: cursorInput }).strict();
export type TweetPagedParams = z.input<typeof tweetPagedInput>;

export async function quotes(execute: Execute, params: TweetPagedParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(tweetPagedInput, params, 'POST /v3/quotes');
  return execute(
    {
      method: 'POST',
      route: '/v3/quotes',
      body: defined({ tweet_link: p.tweetLink, next_cursor: p.cursor }),
      read: (json) => readPage(json, TWEETS, tweetV3Reader),
    },
    options,
  );
}

export async function tweetInfo(execute: Execute, tweetLink: string, options?: CallOptions): Promise<CanonicalTweet> {
  const link = validateInput(idOrLinkInput, tweetLink, 'POST /v3/tweet-info');
  return execute(
    { method: 'POST', route: '/v3/tweet-info', body: { tweet_link: link }, read: (json) => readOne(json, tweetV3Reader) },
    options,
  );
}

/** Up to 100 tweets, answered as `{tweets}`; ids the service does not return (deleted, protected) are absent. */
export async function tweetInfoBulk(execute: Execute, ids: readonly string[], options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const links = validateInput(bulkTweetsInput, ids, 'POST /v3/tweet-info-bulk');
  return execute(
    {
      method: 'POST',
      route: '/v3/tweet-info-bulk',
      // Production's field is `tweet_links` (as in v2). A wrong field name is not refused: the
      // service answers an empty list, which reads as "none of these exist" (issue #10).
      body: { tweet_links: links },
      read: (json) => readPage(json, TWEETS, tweetV3Reader),
    },
    options,
  );
}
