/**
 * A user's profile (one request) and timeline (a cursor walk over /v3/user-tweets). With --every,
 * a timeline watch (identity: the user): each pass reads newest first and stops at the first page
 * holding a tweet at or below the watermark. The pinned tweet the service may put at the head of
 * the first page is older than what follows it: it neither ends a pass nor counts as caught up.
 */
import { z } from 'zod';
import { linkInput } from '../../api-client/input.ts';
import { createWatch, watchIdentity } from '../../store/watches.ts';
import type { FetchedPage, JobKind, PageVerdict, SliceHandler, SliceSpec } from '../kind.ts';
import { snowflakeId } from './ids.ts';
import { InputError } from '../../errors.ts';
import { MAX_TWEETS_WITH_EVERY, maxTweetsStop } from './max-tweets.ts';
import { tweetPage } from './pages.ts';

export const UserTarget = z.union([
  z.object({ username: z.string().regex(/^[A-Za-z0-9_]{1,15}$/) }).strict(),
  z.object({ userId: snowflakeId }).strict(),
  z.object({ userLink: linkInput }).strict(),
]);
export type UserTarget = z.infer<typeof UserTarget>;

export const UserJobParams = z
  .object({
    target: UserTarget,
    maxTweets: z.number().int().positive().optional(),
    /** A timeline watch: seconds between passes. */
    everySeconds: z.number().int().min(60).optional(),
  })
  .strict();
export type UserJobParams = z.infer<typeof UserJobParams>;

/** Refuses (InputError, before any request) what a user job cannot run as asked. */
export function checkUserJob(params: Pick<UserJobParams, 'maxTweets' | 'everySeconds'>): void {
  if (params.everySeconds !== undefined && params.maxTweets !== undefined) throw new InputError(MAX_TWEETS_WITH_EVERY);
}

/** The target as the watch's identity: handles are case-insensitive. */
function targetIdentity(target: UserTarget): Record<string, unknown> {
  if ('username' in target) return { username: target.username.toLowerCase() };
  if ('userId' in target) return { userId: target.userId };
  return { userLink: target.userLink.toLowerCase() };
}

/**
 * A timeline pass reads by the account's id once the job's profile walk has resolved it: a handle
 * can be given up (every pass then met a 404, recorded as cut, with no word to anyone) and taken by
 * another account (whose tweets were then stored as the watched one's).
 */
function timelinePass(params: UserJobParams, input: { watermarkId: string | null; pass: number; profileUserId?: string | null }): SliceSpec {
  const target: UserTarget = input.profileUserId ? { userId: input.profileUserId } : params.target;
  return { kind: 'user-tweets', params: { target, watermarkId: input.watermarkId, pass: input.pass } satisfies TimelineParams };
}

export const userJob: JobKind<UserJobParams> = {
  kind: 'user',
  params: UserJobParams,
  priority: 'backfill',
  plan(params) {
    checkUserJob(params);
    const profile = { kind: 'profile', params: { target: params.target } };
    // A watch's first pass is started by submitJob, from the identity's watermark.
    if (params.everySeconds !== undefined) return [profile];
    return [profile, { kind: 'user-tweets', params: { target: params.target } }];
  },
  stopAt: (params, progress) => maxTweetsStop(params.maxTweets, progress),
  async onCreate(tx, jobId, params) {
    if (params.everySeconds === undefined) return;
    await createWatch(tx, {
      jobId,
      kind: 'user',
      identity: watchIdentity('user', targetIdentity(params.target)),
      handle: 'username' in params.target ? params.target.username : null,
      params,
      everySeconds: params.everySeconds,
    });
  },
  async afterSubmit(queues, jobId, params) {
    if (params.everySeconds !== undefined) await queues.scheduleWatch(jobId, params.everySeconds * 1000);
  },
  passSlice: (params, input) => timelinePass(params, input),
};

const TargetOnly = z.object({ target: UserTarget });
type TargetOnly = z.infer<typeof TargetOnly>;

const TimelineParams = z.object({
  target: UserTarget,
  /** A watch pass: the newest id earlier passes stored (null: the first pass reads it all). */
  watermarkId: z.string().regex(/^\d+$/).nullable().optional(),
  pass: z.number().int().positive().optional(),
});
type TimelineParams = z.infer<typeof TimelineParams>;

/**
 * Pure: a timeline pass ends on a page holding a tweet at or below the watermark, except the
 * pinned tweet at the head of the first page (older than the tweet after it).
 */
export function timelineVerdict(p: TimelineParams, page: FetchedPage, info: { firstPage: boolean }): PageVerdict {
  if (p.watermarkId == null) return {};
  const watermark = BigInt(p.watermarkId);
  const ids = page.tweets.map((t) => BigInt(t.id));
  const considered = info.firstPage && pinnedHeadOf(page.tweets) !== null ? ids.slice(1) : ids;
  return considered.some((id) => id <= watermark) ? { stop: 'caught up with the previous pass' } : {};
}

/** The id of a first page's pinned head: a first tweet older than one after it, else null. */
function pinnedHeadOf(tweets: readonly { id: string }[]): string | null {
  if (tweets.length < 2) return null;
  const head = BigInt(tweets[0]!.id);
  return tweets.slice(1).some((t) => BigInt(t.id) > head) ? tweets[0]!.id : null;
}

export const profileSlice: SliceHandler<TargetOnly> = {
  kind: 'profile',
  params: TargetOnly,
  async fetchPage(p, _cursor, ctx) {
    const user = await ctx.client.info(p.target, ctx.call);
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

export const userTweetsSlice: SliceHandler<TimelineParams> = {
  kind: 'user-tweets',
  params: TimelineParams,
  fetchAhead: true,
  afterPage: timelineVerdict,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.userTweets(
      { ...p.target, ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    const fetched = tweetPage('POST /v3/user-tweets', page);
    // The pinned head is stored, but it says nothing of how far the walk has read.
    const pinned = cursor === null ? pinnedHeadOf(fetched.tweets) : null;
    return pinned === null ? fetched : { ...fetched, outsideRange: pinned };
  },
};
