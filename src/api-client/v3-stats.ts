/**
 * Per-account figures and follower lists of the service's own index (GET, a user named by one of
 * `user_link`, `username`, `user_id`): about, score, score-changes, followers-stats, top-followers,
 * top-following, new-followers-7d, new-following-7d. None is paged.
 */
import type { CallOptions, Execute } from './executor.ts';
import { userRefInput, validateInput } from './input.ts';
import type { UserRef } from './v3-users.ts';
import { readOne, readPage, type ItemReader, type Page } from './page.ts';
import { followerV3Reader, topFollowerReader } from './readers.ts';
import type { DatedUser, ScoredUser } from './results.ts';
import { aboutSchema, followersStatsSchema, scoreChangesSchema, scoreSchema } from './schemas/user-stats.ts';
import type { z } from 'zod';

export interface About {
  country: string | null;
  usernameChangeCount: number | null;
  lastUsernameChangeAt: Date | null;
  raw: unknown;
}

export interface ScoreChanges {
  weekDelta: number;
  monthDelta: number;
  raw: unknown;
}

export interface FollowersStats {
  followersCount: number | null;
  influencersCount: number | null;
  projectsCount: number | null;
  ventureCapitalsCount: number | null;
  userProtected: boolean | null;
  raw: unknown;
}

function byUser<S extends z.ZodType, T>(route: string, reader: ItemReader<S, T>) {
  return async (execute: Execute, user: UserRef, options?: CallOptions): Promise<T> => {
    const p = validateInput(userRefInput, user, `GET ${route}`);
    return execute(
      { method: 'GET', route, query: { user_id: p.userId, username: p.username, user_link: p.userLink }, read: (json) => readOne(json, reader) },
      options,
    );
  };
}

function userListByUser<S extends z.ZodType, T>(route: string, reader: ItemReader<S, T>) {
  return async (execute: Execute, user: UserRef, options?: CallOptions): Promise<Page<T>> => {
    const p = validateInput(userRefInput, user, `GET ${route}`);
    return execute(
      { method: 'GET', route, query: { user_id: p.userId, username: p.username, user_link: p.userLink }, read: (json) => readPage(json, ['users'], reader) },
      options,
    );
  };
}

export const about = byUser('/v3/about', {
  schema: aboutSchema,
  normalize: (a, raw): About => ({
    country: a.country,
    usernameChangeCount: a.username_change_count,
    lastUsernameChangeAt: a.last_username_change_at,
    raw,
  }),
});

export const score = byUser('/v3/score', { schema: scoreSchema, normalize: (s) => s.score });

/** The account must already be in the service's index. */
export const scoreChanges = byUser('/v3/score-changes', {
  schema: scoreChangesSchema,
  normalize: (s, raw): ScoreChanges => ({ weekDelta: s.week_delta, monthDelta: s.month_delta, raw }),
});

export const followersStats = byUser('/v3/followers-stats', {
  schema: followersStatsSchema,
  normalize: (s, raw): FollowersStats => ({
    followersCount: s.followers_count,
    influencersCount: s.influencers_count,
    projectsCount: s.projects_count,
    ventureCapitalsCount: s.venture_capitals_count,
    userProtected: s.user_protected,
    raw,
  }),
});

/** The 20 followers with the highest score. */
export const topFollowers = userListByUser<typeof topFollowerReader.schema, ScoredUser>('/v3/top-followers', topFollowerReader);
/** The 20 followings with the highest score. */
export const topFollowing = userListByUser<typeof topFollowerReader.schema, ScoredUser>('/v3/top-following', topFollowerReader);
/** New followers of the last 7 days, among accounts the service tracks. */
export const newFollowers7d = userListByUser<typeof followerV3Reader.schema, DatedUser>('/v3/new-followers-7d', followerV3Reader);
/** Accounts followed in the last 7 days, tracked accounts only. */
export const newFollowing7d = userListByUser<typeof followerV3Reader.schema, DatedUser>('/v3/new-following-7d', followerV3Reader);
