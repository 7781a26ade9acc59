/** v3 check endpoints (service-production.md): check-comment (GET), check-follow, check-retweet, check-quoted (POST). */
import { z } from 'zod';
import type { CallOptions, Execute } from './executor.ts';
import { cursorInput, defined, exactlyOneUser, idOrLinkInput, userRefInput, userRefShape, validateInput } from './input.ts';
import { readOne } from './page.ts';
import { tweetV3Reader } from './readers.ts';
import { readCommentCheck, readQuoteCheck, type CommentCheck, type QuoteCheck } from './results.ts';
import { checkFollowSchema, checkRetweetSchema } from './schemas/check.ts';

const ONE_USER = 'give exactly one of userId, username, userLink';

const checkInput = z.object({ tweetLink: idOrLinkInput, ...userRefShape }).strict().refine(exactlyOneUser, ONE_USER);
export type CheckParams = z.input<typeof checkInput>;

/** The wire names of a v3 user reference: `user_id`, `username`, `user_link`. */
function userFields(p: { userId?: string; username?: string; userLink?: string }) {
  return { user_id: p.userId, username: p.username, user_link: p.userLink };
}

/** Whether a user replied to a tweet: GET, query `tweet_link` plus one user field. */
export async function checkComment(execute: Execute, params: CheckParams, options?: CallOptions): Promise<CommentCheck> {
  const p = validateInput(checkInput, params, 'GET /v3/check-comment');
  return execute(
    {
      method: 'GET',
      route: '/v3/check-comment',
      query: { tweet_link: p.tweetLink, ...userFields(p) },
      read: (json) => readCommentCheck(json, tweetV3Reader),
    },
    options,
  );
}

/** Whether a user quoted or retweeted a tweet: POST, body `tweet_link` plus one user field. */
export async function checkQuoted(execute: Execute, params: CheckParams, options?: CallOptions): Promise<QuoteCheck> {
  const p = validateInput(checkInput, params, 'POST /v3/check-quoted');
  return execute(
    { method: 'POST', route: '/v3/check-quoted', body: defined({ tweet_link: p.tweetLink, ...userFields(p) }), read: readQuoteCheck },
    options,
  );
}

const checkRetweetInput = z
  .object({ tweetLink: idOrLinkInput, ...userRefShape, cursor: cursorInput })
  .strict()
  .refine(exactlyOneUser, ONE_USER);
export type CheckRetweetParams = z.input<typeof checkRetweetInput>;

export interface RetweetCheck {
  retweet: boolean;
  userProtected: boolean | null;
  /** Each call scans up to 100 retweets; a cursor means the scan can go on (null: scanned all). */
  nextCursor: string | null;
  raw: unknown;
}

export async function checkRetweet(execute: Execute, params: CheckRetweetParams, options?: CallOptions): Promise<RetweetCheck> {
  const p = validateInput(checkRetweetInput, params, 'POST /v3/check-retweet');
  return execute(
    {
      method: 'POST',
      route: '/v3/check-retweet',
      body: defined({ tweet_link: p.tweetLink, ...userFields(p), next_cursor: p.cursor }),
      read: (json) =>
        readOne(json, {
          schema: checkRetweetSchema,
          normalize: (c, raw) => ({ retweet: c.retweet, userProtected: c.user_protected, nextCursor: c.next_cursor, raw }),
        }),
    },
    options,
  );
}

const checkFollowInput = z.object({ followed: userRefInput, follower: userRefInput }).strict();
export type CheckFollowParams = z.input<typeof checkFollowInput>;

export interface FollowCheck {
  follow: boolean;
  /** The follower side's profile is private (the answer may then be unknowable). */
  userProtected: boolean | null;
  raw: unknown;
}

/**
 * Whether `follower` follows `followed`. Production's body is flat: side 1 (`username_1`,
 * `user_id_1`, `user_link_1`) is the account that should be followed, side 2 the account checked.
 */
export async function checkFollow(execute: Execute, params: CheckFollowParams, options?: CallOptions): Promise<FollowCheck> {
  const p = validateInput(checkFollowInput, params, 'POST /v3/check-follow');
  const body = defined({
    username_1: p.followed.username,
    user_id_1: p.followed.userId,
    user_link_1: p.followed.userLink,
    username_2: p.follower.username,
    user_id_2: p.follower.userId,
    user_link_2: p.follower.userLink,
  });
  return execute(
    {
      method: 'POST',
      route: '/v3/check-follow',
      body,
      read: (json) =>
        readOne(json, { schema: checkFollowSchema, normalize: (c, raw) => ({ follow: c.follow, userProtected: c.user_protected, raw }) }),
    },
    options,
  );
}
