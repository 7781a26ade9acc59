/**
 * Production's account analytics (score, score changes, follower stats, top and new followers),
 * trends and /about. The spec names only /score and /about, without shapes, so both profiles serve
 * the reference's shapes. The world records who follows whom, not when or how influential, so
 * the numbers are derived deterministically from the graph and a hash (docs/simulator.md).
 */
import { createHash } from 'node:crypto';
import type { RouteDef, SimContext } from './context.ts';
import { badRequest, notFound } from './http-utils.ts';
import type { SimUser } from './model.ts';
import { userFromParams } from './params.ts';
import { isListedUser, renderUserV3, v3Time } from './render-v3.ts';
import { isoTime } from './time-format.ts';

const DAY_MS = 86_400_000;
const TOP_SIZE = 20;
const NEW_MAX = 200;

function digest(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

/** An influence score from the follower count, with a bonus for legacy verification. */
export function userScore(u: SimUser): number {
  return Math.round(Math.log10(1 + u.followersCount) * 100 + (u.verified ? 50 : 0)) / 10;
}

const COUNTRIES = ['United States', 'United Kingdom', 'Germany', 'France', 'Japan', 'Brazil', 'India', 'Canada'] as const;

function about(ctx: SimContext): unknown {
  const user = userFromParams(ctx);
  const changes = digest(`${user.id}:renames`) % 4;
  const out: Record<string, unknown> = {
    // a stable pseudo-country from the profile's location text (the world has no countries)
    country: user.location === '' ? null : COUNTRIES[digest(user.location) % COUNTRIES.length]!,
    username_change_count: changes,
  };
  const span = Math.max(1, ctx.nowMs - user.createdAtMs);
  out.last_username_change_at = changes > 0 ? isoTime(user.createdAtMs + (digest(`${user.id}:renamed`) % span)) : null;
  if (!ctx.quirks.explicitNulls) for (const k of Object.keys(out)) if (out[k] === null) delete out[k];
  return out;
}

function listed(ctx: SimContext, indices: readonly number[]): SimUser[] {
  return indices.flatMap((ix) => {
    const u = ctx.world.users[ix];
    return isListedUser(u) ? [u] : [];
  });
}

function renderTopFollower(ctx: SimContext, u: SimUser): Record<string, unknown> {
  return {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    description: u.description,
    created_at: v3Time(ctx, u.createdAtMs),
    profile_image_url: u.profileImageUrl,
    profile_background_image_url: u.profileBackgroundImageUrl,
    followers_count: u.followersCount,
    followings_count: u.followingsCount,
    tweets_count: u.tweetsCount,
    can_dm: u.canDm,
    protected: u.protected,
    verified: u.verified,
    score: userScore(u),
  };
}

function top(ctx: SimContext, side: 'followers' | 'following'): unknown {
  const user = userFromParams(ctx);
  const source = side === 'followers' ? ctx.world.followersOf(user.index) : ctx.world.followsOf(user.index);
  const ranked = listed(ctx, source).sort((a, b) => userScore(b) - userScore(a) || a.index - b.index);
  return { users: ranked.slice(0, TOP_SIZE).map((u) => renderTopFollower(ctx, u)) };
}

/**
 * The newest 5% of the account's followers (or follows), at most 200, dated deterministically
 * within the last seven days, newest first. Follower = the v3 user without `location`, plus
 * `followerDate` (ISO 8601).
 */
function newSevenDays(ctx: SimContext, side: 'followers' | 'following'): unknown {
  const user = userFromParams(ctx);
  const source = side === 'followers' ? ctx.world.followersOf(user.index) : ctx.world.followsOf(user.index);
  const n = Math.min(NEW_MAX, Math.ceil(source.length * 0.05));
  const dated = listed(ctx, source.slice(source.length - n)).map((u) => ({
    u,
    at: ctx.nowMs - (digest(`${user.id}:${side}:${u.id}`) % (7 * DAY_MS)),
  }));
  dated.sort((a, b) => b.at - a.at || a.u.index - b.u.index);
  return {
    users: dated.map(({ u, at }) => {
      const { location: _location, ...rest } = renderUserV3(ctx, u);
      return { ...rest, followerDate: isoTime(at) };
    }),
  };
}

function followersStats(ctx: SimContext): unknown {
  const user = userFromParams(ctx, undefined, { allowProtected: true });
  const followers = user.protected ? [] : listed(ctx, ctx.world.followersOf(user.index));
  const h = (u: SimUser): number => digest(`${u.id}:kind`) % 100;
  return {
    followers_count: followers.length,
    influencers_count: followers.filter((u) => userScore(u) >= 20).length,
    projects_count: followers.filter((u) => h(u) < 8).length,
    venture_capitals_count: followers.filter((u) => h(u) === 99).length,
    user_protected: user.protected,
  };
}

function scoreChanges(ctx: SimContext): unknown {
  const user = userFromParams(ctx);
  const delta = (tag: string, range: number): number => ((digest(`${user.id}:${tag}`) % (2 * range + 1)) - range) / 10;
  return { week_delta: delta('week', 30), month_delta: delta('month', 90) };
}

/** WOEIDs the simulated platform has trends for: worldwide and a few countries. */
const WOEIDS = [1, 23424977, 23424975, 23424829, 23424819, 23424856, 23424768, 23424848, 23424775] as const;
const TREND_WINDOW = 2_000;
const TREND_COUNT = 10;

/** The most used hashtags of the newest tweets; each place sees the ranking from its own offset. */
function trends(ctx: SimContext): unknown {
  const raw = ctx.query.get('woeid');
  if (raw === null || raw === '') throw badRequest('woeid is required');
  if (!/^\d{1,10}$/.test(raw)) throw badRequest('woeid must be an integer');
  const place = WOEIDS.indexOf(Number(raw) as (typeof WOEIDS)[number]);
  if (place < 0) throw notFound(`no trends for woeid ${raw}`);
  const t = ctx.world.tweets;
  const counts = new Map<string, number>();
  for (let i = Math.max(0, t.count - TREND_WINDOW); i < t.count; i++) {
    for (const tag of t.hashtags(i)) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([tag]) => tag);
  const picked = [...ranked.slice(place), ...ranked.slice(0, place)].slice(0, TREND_COUNT);
  return {
    trends: picked.map((tag) => {
      const query = encodeURIComponent(`#${tag}`);
      return { name: `#${tag}`, query, url: `https://x.com/search?q=${query}` };
    }),
  };
}

export const scoreRoutes: RouteDef[] = [
  { method: 'GET', path: '/v3/about', handler: about },
  { method: 'GET', path: '/v3/score', handler: (ctx) => ({ score: userScore(userFromParams(ctx)) }) },
  { method: 'GET', path: '/v3/score-changes', handler: scoreChanges },
  { method: 'GET', path: '/v3/followers-stats', handler: followersStats },
  { method: 'GET', path: '/v3/top-followers', handler: (ctx) => top(ctx, 'followers') },
  { method: 'GET', path: '/v3/top-following', handler: (ctx) => top(ctx, 'following') },
  { method: 'GET', path: '/v3/new-followers-7d', handler: (ctx) => newSevenDays(ctx, 'followers') },
  { method: 'GET', path: '/v3/new-following-7d', handler: (ctx) => newSevenDays(ctx, 'following') },
  { method: 'GET', path: '/v3/trends', handler: trends },
];
