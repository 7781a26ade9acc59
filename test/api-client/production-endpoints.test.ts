/**
 * Every endpoint of production's v3 reference (service-production.md, all 40): the client sends
 * production's method, path and field names, and reads production's answer shape. Against a raw
 * node:http server on port 0 that records the request and answers production-shaped JSON (tweets
 * and users taken from the real captured page), so the simulator cannot agree with a wrong client.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { GoneError } from '../../src/api-client/errors.ts';
import { recordingGate, startRawServer, type RawServer } from './helpers.ts';

interface RealPage {
  tweets: Array<Record<string, unknown> & { id: string; user: Record<string, unknown> & { id: string } }>;
}
const real = JSON.parse(readFileSync(new URL('../fixtures/search-tweets.v3.real.json', import.meta.url), 'utf8')) as RealPage;
const TWEET = real.tweets[2]!; // NatGeo's photo tweet
const REPLY = real.tweets.find((t) => t.id === '2083308407067394481')!;
const USER = real.tweets[0]!.user; // NatGeo
const { location: _location, ...userWithoutLocation } = USER;
const FOLLOWER = { ...userWithoutLocation, followerDate: '2026-08-01T10:00:00Z' };
const TOP = {
  id: '21436960',
  username: 'esa',
  display_name: 'European Space Agency',
  description: 'space',
  created_at: 'Fri Feb 20 21:38:25 +0000 2009',
  profile_image_url: 'https://pbs.twimg.com/a.jpg',
  profile_background_image_url: null,
  followers_count: 1896482,
  followings_count: 1022,
  tweets_count: 63996,
  can_dm: false,
  protected: false,
  verified: true,
  score: 912.5,
};
const COMMUNITY_USER = { id: '1500000000000000001', username: 'member1', display_name: 'M', profile_image_url: null, protected: false, verified: false };
const SPACE = {
  id: '1YqKDqWqdPOKV',
  title: 'Launch',
  state: 'Ended',
  media_key: '28_1',
  is_subscribed: false,
  created_at: 1754000000000,
  updated_at: 1754000100000,
  scheduled_start: 1754000000000,
  creator: USER,
  participants: { admins: [{ id: '17471979', username: 'NatGeo', name: 'NG', avatar: 'a', periscope_user_id: 'p', is_muted_by_admin: false, is_muted_by_guest: false, is_verified: true, start: 1 }], speakers: [], listeners: [], total: 1 },
  settings: { conversation_controls: 0, disallow_join: false },
  stats: { total_live_listeners: 0, total_participants: 1, total_replay_watched: 7 },
};

const KEY = 'sk_prod_SECRET_e2e2';
let server: RawServer;
let client: ApiClient;
let reply: { status: number; body: string } = { status: 200, body: '{}' };

beforeAll(async () => {
  server = await startRawServer((_req, res) => {
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(reply.body);
  });
  client = new ApiClient({ baseUrl: server.url, gate: recordingGate(KEY), timeoutMs: 5000, retry: { maxAttemptsTransient: 1, maxAttemptsRateLimited: 1 } });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

beforeEach(() => {
  server.requests.length = 0;
});

interface Case {
  /** `METHOD /v3/path` as production's reference names it. */
  endpoint: string;
  call: (c: ApiClient) => Promise<unknown>;
  /** Expected query (GET), repeated keys as arrays. */
  query?: Record<string, string | string[]>;
  /** Expected JSON body (POST). */
  body?: Record<string, unknown>;
  /** The concrete path when the route has a placeholder. */
  path?: string;
  answer: unknown;
  check: (result: never) => void;
}

const page = (key: string, items: unknown[], next_cursor: unknown = 'NEXT') => ({ [key]: items, next_cursor });

const cases: Case[] = [
  {
    endpoint: 'POST /v3/tweet-info',
    call: (c) => c.tweetInfo(TWEET.id),
    body: { tweet_link: TWEET.id },
    answer: TWEET,
    check: (t: { id: string; authorId: string }) => expect([t.id, t.authorId]).toEqual([TWEET.id, USER.id]),
  },
  {
    endpoint: 'POST /v3/tweet-info-bulk',
    call: (c) => c.tweetInfoBulk([TWEET.id, `https://x.com/NASA/status/${REPLY.id}`]),
    body: { tweet_links: [TWEET.id, `https://x.com/NASA/status/${REPLY.id}`] },
    answer: { tweets: [TWEET, REPLY] },
    check: (p: { items: Array<{ id: string }> }) => expect(p.items.map((t) => t.id)).toEqual([TWEET.id, REPLY.id]),
  },
  {
    endpoint: 'POST /v3/user-tweets',
    call: (c) => c.userTweets({ username: 'NatGeo', cursor: 'C1' }),
    body: { username: 'NatGeo', next_cursor: 'C1' },
    answer: page('tweets', [TWEET]),
    check: (p: { items: unknown[]; nextCursor: string }) => expect([p.items.length, p.nextCursor]).toEqual([1, 'NEXT']),
  },
  {
    endpoint: 'POST /v3/comments',
    call: (c) => c.comments({ tweetLink: REPLY.in_reply_to_tweet_id as string, orderBy: 'Recency' }),
    body: { tweet_link: REPLY.in_reply_to_tweet_id, order_by: 'Recency' },
    answer: page('tweets', [REPLY], null),
    check: (p: { items: Array<{ inReplyToTweetId: string }>; nextCursor: null }) =>
      expect([p.items[0]?.inReplyToTweetId, p.nextCursor]).toEqual([REPLY.in_reply_to_tweet_id, null]),
  },
  {
    endpoint: 'POST /v3/quotes',
    call: (c) => c.quotes({ tweetLink: TWEET.id, cursor: 'Q' }),
    body: { tweet_link: TWEET.id, next_cursor: 'Q' },
    answer: page('tweets', [TWEET]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'POST /v3/retweeters',
    call: (c) => c.retweeters({ tweetLink: TWEET.id }),
    body: { tweet_link: TWEET.id },
    answer: page('users', [USER]),
    check: (p: { items: Array<{ id: string; source: string }> }) => expect(p.items[0]).toMatchObject({ id: USER.id, source: 'v3' }),
  },
  {
    endpoint: 'POST /v3/article',
    call: (c) => c.article(TWEET.id),
    body: { tweet_link: TWEET.id },
    answer: { full_text: 'long read', preview_text: 'long', cover_image_url: null, published_at: '2026-08-01T10:00:00Z', likes_count: 3, retweet_count: 1, reply_count: 0, quote_count: 0, bookmark_count: 2, views_count: 900, author: USER },
    check: (a: { viewCount: number; author: { id: string }; publishedAt: Date }) =>
      expect([a.viewCount, a.author.id, a.publishedAt.toISOString()]).toEqual([900, USER.id, '2026-08-01T10:00:00.000Z']),
  },
  {
    endpoint: 'GET /v3/trends',
    call: (c) => c.trends({ woeid: 1 }),
    query: { woeid: '1' },
    answer: { trends: [{ name: '#Perseids', query: '%23Perseids', url: 'https://x.com/search?q=%23Perseids' }] },
    check: (p: { items: Array<{ name: string }>; nextCursor: null }) => expect([p.items[0]?.name, p.nextCursor]).toEqual(['#Perseids', null]),
  },
  {
    endpoint: 'GET /v3/info',
    call: (c) => c.info({ userLink: 'https://x.com/NatGeo' }),
    query: { user_link: 'https://x.com/NatGeo' },
    answer: USER,
    check: (u: { id: string; createdAt: Date }) => expect([u.id, u.createdAt.toISOString()]).toEqual([USER.id, '2008-11-18T21:28:10.000Z']),
  },
  {
    endpoint: 'GET /v3/info-batch',
    call: (c) => c.infoBatch({ usernames: ['NatGeo', 'esa'] }),
    query: { usernames: ['NatGeo', 'esa'] },
    answer: { users: [USER] },
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/followers',
    call: (c) => c.followers({ userId: USER.id, cursor: 1700000000123 }),
    query: { user_id: USER.id, next_cursor: '1700000000123' },
    answer: page('users', [USER], '1699999999999'),
    check: (p: { nextCursor: string }) => expect(p.nextCursor).toBe('1699999999999'),
  },
  {
    endpoint: 'GET /v3/follows',
    call: (c) => c.follows({ username: 'NatGeo', cursor: '12' }),
    query: { username: 'NatGeo', next_cursor: '12' },
    answer: page('users', [USER]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/verified-followers',
    call: (c) => c.verifiedFollowers({ username: 'NatGeo' }),
    query: { username: 'NatGeo' },
    answer: page('users', [USER]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/about',
    call: (c) => c.about({ username: 'NatGeo' }),
    query: { username: 'NatGeo' },
    answer: { country: 'United States', username_change_count: 0, last_username_change_at: null },
    check: (a: { country: string; usernameChangeCount: number }) => expect([a.country, a.usernameChangeCount]).toEqual(['United States', 0]),
  },
  {
    endpoint: 'POST /v3/search-tweets',
    call: (c) => c.searchTweets({ query: 'from:NatGeo', order: 'latest' }),
    body: { query: 'from:NatGeo', order: 'latest' },
    answer: page('tweets', [TWEET]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'POST /v3/mentions',
    call: (c) => c.mentions({ query: 'NASA', order: 'latest', sinceDate: '2026-08-01', untilDate: '2026-08-03', minLikes: 1, minRetweets: 2, minReplies: 3 }),
    body: { query: 'NASA', order: 'latest', since_date: '2026-08-01', until_date: '2026-08-03', min_likes: 1, min_retweets: 2, min_replies: 3 },
    answer: page('tweets', [REPLY]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'POST /v3/search-users',
    call: (c) => c.searchUsers({ query: 'space', cursor: 'S' }),
    body: { query: 'space', next_cursor: 'S' },
    answer: page('users', [USER]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/place',
    call: (c) => c.place({ link: 'https://x.com/i/spaces/1YqKDqWqdPOKV' }),
    query: { link: 'https://x.com/i/spaces/1YqKDqWqdPOKV' },
    answer: SPACE,
    check: (s: { id: string; creator: { id: string } }) => expect([s.id, s.creator.id]).toEqual([SPACE.id, USER.id]),
  },
  {
    endpoint: 'GET /v3/list-tweets',
    call: (c) => c.listTweets({ listId: '1600000000000000000', cursor: 'L' }),
    query: { list_id: '1600000000000000000', next_cursor: 'L' },
    answer: page('tweets', [TWEET]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/list-members',
    call: (c) => c.listMembers({ listId: '1600000000000000000', cursor: 5 }),
    query: { list_id: '1600000000000000000', next_cursor: '5' },
    answer: page('users', [USER]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/list-followers',
    call: (c) => c.listFollowers({ listLink: 'https://x.com/i/lists/1600000000000000000' }),
    query: { list_link: 'https://x.com/i/lists/1600000000000000000' },
    answer: page('users', [USER]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'POST /v3/community-members',
    call: (c) => c.communityMembers({ communityLink: '1500000000000000000' }),
    body: { community_link: '1500000000000000000' },
    answer: page('users', [COMMUNITY_USER]),
    check: (p: { items: Array<{ source: string; username: string }> }) => expect(p.items[0]).toMatchObject({ source: 'v3-reduced', username: 'member1' }),
  },
  {
    endpoint: 'POST /v3/community-tweets',
    call: (c) => c.communityTweets({ communityId: '1500000000000000000', order: 'latest', cursor: 'K' }),
    body: { community_id: '1500000000000000000', order: 'latest', next_cursor: 'K' },
    answer: page('tweets', [TWEET]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'POST /v3/community-search-tweets',
    call: (c) => c.communitySearchTweets({ communityLink: 'https://x.com/i/communities/1500000000000000000', query: 'moon', order: 'popular' }),
    body: { community_link: 'https://x.com/i/communities/1500000000000000000', query: 'moon', order: 'popular' },
    answer: page('tweets', [TWEET]),
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/check-comment',
    call: (c) => c.checkComment({ tweetLink: REPLY.in_reply_to_tweet_id as string, username: 'NASA' }),
    query: { tweet_link: REPLY.in_reply_to_tweet_id as string, username: 'NASA' },
    answer: { commented: true, tweet: REPLY },
    check: (r: { commented: boolean; tweet: { id: string } }) => expect([r.commented, r.tweet.id]).toEqual([true, REPLY.id]),
  },
  {
    endpoint: 'POST /v3/check-follow',
    call: (c) => c.checkFollow({ followed: { username: 'NASA' }, follower: { userId: USER.id } }),
    body: { username_1: 'NASA', user_id_2: USER.id },
    answer: { follow: true, user_protected: false },
    check: (r: { follow: boolean; userProtected: boolean }) => expect([r.follow, r.userProtected]).toEqual([true, false]),
  },
  {
    endpoint: 'POST /v3/check-retweet',
    call: (c) => c.checkRetweet({ tweetLink: TWEET.id, userLink: 'https://x.com/esa', cursor: 'R' }),
    body: { tweet_link: TWEET.id, user_link: 'https://x.com/esa', next_cursor: 'R' },
    answer: { retweet: false, user_protected: false, next_cursor: 'R2' },
    check: (r: { retweet: boolean; nextCursor: string }) => expect([r.retweet, r.nextCursor]).toEqual([false, 'R2']),
  },
  {
    endpoint: 'POST /v3/check-quoted',
    call: (c) => c.checkQuoted({ tweetLink: TWEET.id, username: 'esa' }),
    body: { tweet_link: TWEET.id, username: 'esa' },
    answer: { status: 'quoted', date: '2024-04-27 06:43:09', text: 'look', user_protected: false },
    check: (r: { status: string; date: Date }) => expect([r.status, r.date.toISOString()]).toEqual(['quoted', '2024-04-27T06:43:09.000Z']),
  },
  {
    endpoint: 'POST /v3/check-community-member',
    call: (c) => c.checkCommunityMember({ communityId: '1500000000000000000', userId: USER.id }),
    body: { community_id: '1500000000000000000', user_id: USER.id },
    answer: { is_member: true },
    check: (r: boolean) => expect(r).toBe(true),
  },
  {
    endpoint: 'GET /v3/key-usage-info',
    call: (c) => c.keyUsageInfo(),
    query: {},
    answer: { key_requests: 10000, remaining_requests: 9000, total_requests: 51000, valid_until: '2026-09-01T00:00:00Z' },
    check: (u: { remainingRequests: number; validUntil: Date }) => expect([u.remainingRequests, u.validUntil.toISOString()]).toEqual([9000, '2026-09-01T00:00:00.000Z']),
  },
  {
    endpoint: 'GET /v3/username-to-id/{user_handle}',
    path: '/v3/username-to-id/NatGeo',
    call: (c) => c.usernameToId('NatGeo'),
    query: {},
    answer: { id: USER.id },
    check: (id: string) => expect(id).toBe(USER.id),
  },
  {
    endpoint: 'GET /v3/id-to-username/{user_id}',
    path: `/v3/id-to-username/${USER.id}`,
    call: (c) => c.idToUsername(USER.id),
    query: {},
    answer: { handle: 'NatGeo' },
    check: (h: string) => expect(h).toBe('NatGeo'),
  },
  {
    endpoint: 'GET /v3/link-to-id',
    call: (c) => c.linkToId('https://x.com/NatGeo'),
    query: { link: 'https://x.com/NatGeo' },
    answer: { id: USER.id },
    check: (id: string) => expect(id).toBe(USER.id),
  },
  {
    endpoint: 'GET /v3/score',
    call: (c) => c.score({ username: 'NatGeo' }),
    query: { username: 'NatGeo' },
    answer: { score: 1234.5 },
    check: (s: number) => expect(s).toBe(1234.5),
  },
  {
    endpoint: 'GET /v3/score-changes',
    call: (c) => c.scoreChanges({ userId: USER.id }),
    query: { user_id: USER.id },
    answer: { week_delta: -2.5, month_delta: 10 },
    check: (s: { weekDelta: number; monthDelta: number }) => expect([s.weekDelta, s.monthDelta]).toEqual([-2.5, 10]),
  },
  {
    endpoint: 'GET /v3/followers-stats',
    call: (c) => c.followersStats({ username: 'NatGeo' }),
    query: { username: 'NatGeo' },
    answer: { followers_count: 27979637, influencers_count: 900, projects_count: 12, venture_capitals_count: 3, user_protected: false },
    check: (s: { followersCount: number; ventureCapitalsCount: number }) => expect([s.followersCount, s.ventureCapitalsCount]).toEqual([27979637, 3]),
  },
  {
    endpoint: 'GET /v3/top-followers',
    call: (c) => c.topFollowers({ username: 'NatGeo' }),
    query: { username: 'NatGeo' },
    answer: { users: [TOP] },
    check: (p: { items: Array<{ user: { id: string; source: string }; score: number }> }) =>
      expect(p.items[0]).toMatchObject({ user: { id: TOP.id, source: 'v3-top-follower' }, score: 912.5 }),
  },
  {
    endpoint: 'GET /v3/top-following',
    call: (c) => c.topFollowing({ userLink: 'https://x.com/NatGeo' }),
    query: { user_link: 'https://x.com/NatGeo' },
    answer: { users: [TOP] },
    check: (p: { items: unknown[] }) => expect(p.items).toHaveLength(1),
  },
  {
    endpoint: 'GET /v3/new-followers-7d',
    call: (c) => c.newFollowers7d({ username: 'NatGeo' }),
    query: { username: 'NatGeo' },
    answer: { users: [FOLLOWER] },
    check: (p: { items: Array<{ user: { id: string; location: null; source: string }; followedAt: Date }> }) => {
      expect(p.items[0]?.user).toMatchObject({ id: USER.id, location: null, source: 'v3-follower' });
      expect(p.items[0]?.followedAt.toISOString()).toBe('2026-08-01T10:00:00.000Z');
    },
  },
  {
    endpoint: 'GET /v3/new-following-7d',
    call: (c) => c.newFollowing7d({ userId: USER.id }),
    query: { user_id: USER.id },
    answer: { users: [FOLLOWER] },
    check: (p: { items: Array<{ followedAt: Date }> }) => expect(p.items[0]?.followedAt).toBeInstanceOf(Date),
  },
];

function queryOf(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    out[name] = values.length > 1 ? values : values[0]!;
  }
  return out;
}

describe("production's v3 reference", () => {
  it('has a case for each of its 40 endpoints', () => {
    expect(new Set(cases.map((c) => c.endpoint)).size).toBe(40);
  });

  it.each(cases.map((c) => [c.endpoint, c] as const))('%s: method, path, field names and answer shape', async (endpoint, c) => {
    reply = { status: 200, body: JSON.stringify(c.answer) };
    const result = await c.call(client);
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0]!;
    const [method, route] = endpoint.split(' ') as [string, string];
    const url = new URL(request.url, server.url);
    expect(request.method).toBe(method);
    expect(url.pathname).toBe(c.path ?? route);
    if (method === 'GET') {
      expect(queryOf(url)).toEqual(c.query ?? {});
    } else {
      expect(url.search).toBe('');
      expect(request.headers['content-type']).toBe('application/json');
      expect(JSON.parse(request.body)).toEqual(c.body);
    }
    (c.check as (r: unknown) => void)(result);
  });

  it('keeps an integer cursor above 2^53 digit for digit and sends it back verbatim', async () => {
    reply = { status: 200, body: `{"users":[],"next_cursor":18446744073709551615}` };
    const first = await client.follows({ username: 'NatGeo' });
    expect(first.nextCursor).toBe('18446744073709551615');
    await client.follows({ username: 'NatGeo', cursor: first.nextCursor! });
    expect(new URL(server.requests[1]!.url, server.url).searchParams.get('next_cursor')).toBe('18446744073709551615');
  });
});

describe('retired v2 endpoints', () => {
  it.each([
    ['POST /v2/comments', (c: ApiClient) => c.v2.comments({ tweetLink: '1' }), 'POST /v3/comments'],
    ['GET /v2/list-tweets', (c: ApiClient) => c.v2.listTweets({ listId: '1' }), 'GET /v3/list-tweets'],
    ['POST /v2/user-tweets', (c: ApiClient) => c.v2.userTweets({ userId: '1' }), 'POST /v3/user-tweets'],
    ['GET /v2/check-comment', (c: ApiClient) => c.v2.checkComment({ tweetLink: '1', userId: '2' }), 'GET /v3/check-comment'],
    ['POST /v2/tweet-info', (c: ApiClient) => c.v2.tweetInfo('1'), 'POST /v3/tweet-info'],
    ['POST /v2/tweet-info-bulk', (c: ApiClient) => c.v2.tweetInfoBulk(['1']), 'POST /v3/tweet-info-bulk'],
    ['GET /v2/info/{user_handle}', (c: ApiClient) => c.v2.info('NatGeo'), 'GET /v3/info'],
    ['GET /v2/follows', (c: ApiClient) => c.v2.follows({ userId: '1' }), 'GET /v3/follows'],
    ['GET /v2/new-following-7d', (c: ApiClient) => c.v2.newFollowing7d({ userId: '1' }), 'GET /v3/new-following-7d'],
    ['POST /v2/check-quoted', (c: ApiClient) => c.v2.checkQuoted({ tweetLink: '1', userId: '2' }), 'POST /v3/check-quoted'],
  ])('%s answers 410 naming its v3 counterpart', async (endpoint, call, replacement) => {
    reply = { status: 410, body: '{"message":"v2 is retired"}' };
    const error = await call(client).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GoneError);
    expect((error as GoneError).endpoint).toBe(endpoint);
    expect((error as GoneError).replacement).toBe(replacement);
    expect((error as GoneError).message).toContain(`use ${replacement}`);
    expect(server.requests).toHaveLength(1);
  });
});
