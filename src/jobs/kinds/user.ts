/** A user's profile (one request) and timeline (a cursor walk over /v3/user-tweets). */
import { z } from 'zod';
import type { JobKind, SliceHandler } from '../kind.ts';
import { snowflakeId } from './ids.ts';
import { maxTweetsStop } from './max-tweets.ts';
import { tweetPage } from './pages.ts';

export const UserTarget = z.union([
  z.object({ username: z.string().regex(/^[A-Za-z0-9_]{1,15}$/) }).strict(),
  z.object({ userId: snowflakeId }).strict(),
  z.object({ userLink: z.url() }).strict(),
]);
export type UserTarget = z.infer<typeof UserTarget>;

export const UserJobParams = z
  .object({ target: UserTarget, maxTweets: z.number().int().positive().optional() })
  .strict();
export type UserJobParams = z.infer<typeof UserJobParams>;

export const userJob: JobKind<UserJobParams> = {
  kind: 'user',
  params: UserJobParams,
  priority: 'backfill',
  plan(params) {
    return [
      { kind: 'profile', params: { target: params.target } },
      { kind: 'user-tweets', params: { target: params.target } },
    ];
  },
  stopAt: (params, progress) => maxTweetsStop(params.maxTweets, progress),
};

const TargetOnly = z.object({ target: UserTarget });
type TargetOnly = z.infer<typeof TargetOnly>;

export const profileSlice: SliceHandler<TargetOnly> = {
  kind: 'profile',
  params: TargetOnly,
  async fetchPage(p, _cursor, ctx) {
    const user = await ctx.client.info(p.target, { priority: ctx.priority, jobId: ctx.jobId, signal: ctx.signal });
    return {
      endpoint: 'GET /v3/info',
      tweets: [],
      users: [user],
      userRole: 'profile',
      nextCursor: null,
      quarantined: [],
      itemCount: 1,
    };
  },
};

export const userTweetsSlice: SliceHandler<TargetOnly> = {
  kind: 'user-tweets',
  params: TargetOnly,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.userTweets(
      { ...p.target, ...(cursor ? { cursor } : {}) },
      { priority: ctx.priority, jobId: ctx.jobId, signal: ctx.signal },
    );
    return tweetPage('POST /v3/user-tweets', page);
  },
};
