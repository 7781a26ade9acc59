/**
 * Endpoint conformance: every one of production's 40 v3 endpoints, called over HTTP in both
 * profiles with production's method, path and fields, answers 200 with the shape of
 * service-production.md (schemas in reference-schemas.ts, written from that file). Paged
 * endpoints are walked to their end, each page checked, cursors sent back as received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { FX, get, post, startFixture, type Call } from './server-helpers.ts';
import { PROFILES, referenceSchemas, type Profile, type ReferenceSchemas } from './reference-schemas.ts';

const LIST = '1700000000000000001';
const COMMUNITY = '1700000000000000002';

interface Env {
  sim: RunningSimulator;
  tid: (fixture: number) => string;
  uid: (handle: string) => string;
  spaceId: string;
}

interface Endpoint {
  /** Method and path as service-production.md names them. */
  name: string;
  /** One call; `cursor` continues a walk (the raw cursor text as received). */
  call: (env: Env, cursor: string | null) => Promise<Call>;
  schema: (s: ReferenceSchemas) => z.ZodType;
  /** The answer's list field, when the answer holds one that must not be empty here. */
  list?: string;
  /** Paged: walk on while next_cursor is set. */
  paged?: boolean;
}

const withCursor = (cursor: string | null): Record<string, string> => (cursor === null ? {} : { next_cursor: cursor });
const q = (cursor: string | null): string => (cursor === null ? '' : `&next_cursor=${encodeURIComponent(cursor)}`);

const ENDPOINTS: Endpoint[] = [
  { name: 'POST /tweet-info', call: (e) => post(e.sim, '/v3/tweet-info', { tweet_link: e.tid(FX.bobQuote) }), schema: (s) => s.tweet },
  {
    name: 'POST /tweet-info-bulk',
    call: (e) => post(e.sim, '/v3/tweet-info-bulk', { tweet_links: [e.tid(1), `https://x.com/alice/status/${e.tid(2)}`, e.tid(FX.mediaTweet)] }),
    schema: (s) => s.tweets,
    list: 'tweets',
  },
  {
    name: 'POST /user-tweets',
    call: (e, c) => post(e.sim, '/v3/user-tweets', { username: 'alice', ...withCursor(c) }),
    schema: (s) => s.tweetsPage,
    list: 'tweets',
    paged: true,
  },
  {
    name: 'POST /comments',
    call: (e, c) => post(e.sim, '/v3/comments', { tweet_link: e.tid(FX.aliceRoot), order_by: 'Recency', ...withCursor(c) }),
    schema: (s) => s.tweetsPage,
    list: 'tweets',
    paged: true,
  },
  { name: 'POST /quotes', call: (e, c) => post(e.sim, '/v3/quotes', { tweet_link: e.tid(1), ...withCursor(c) }), schema: (s) => s.tweetsPage, list: 'tweets', paged: true },
  {
    name: 'POST /retweeters',
    call: (e, c) => post(e.sim, '/v3/retweeters', { tweet_link: e.tid(2), ...withCursor(c) }),
    schema: (s) => s.usersPage,
    list: 'users',
    paged: true,
  },
  { name: 'POST /article', call: (e) => post(e.sim, '/v3/article', { tweet_link: e.tid(FX.mediaTweet) }), schema: (s) => s.article },
  { name: 'GET /trends', call: (e) => get(e.sim, '/v3/trends?woeid=1'), schema: (s) => s.trends },
  { name: 'GET /info', call: (e) => get(e.sim, '/v3/info?username=alice'), schema: (s) => s.user },
  { name: 'GET /info-batch', call: (e) => get(e.sim, '/v3/info-batch?usernames=alice&usernames=bob'), schema: (s) => s.users, list: 'users' },
  { name: 'GET /followers', call: (e, c) => get(e.sim, `/v3/followers?username=alice${q(c)}`), schema: (s) => s.usersIntPage, list: 'users', paged: true },
  { name: 'GET /follows', call: (e, c) => get(e.sim, `/v3/follows?username=u001${q(c)}`), schema: (s) => s.usersIntPage, list: 'users', paged: true },
  {
    name: 'GET /verified-followers',
    call: (e, c) => get(e.sim, `/v3/verified-followers?user_id=${e.uid('alice')}${q(c)}`),
    schema: (s) => s.usersPage,
    list: 'users',
    paged: true,
  },
  { name: 'GET /about', call: (e) => get(e.sim, '/v3/about?username=alice'), schema: (s) => s.about },
  {
    name: 'POST /search-tweets',
    call: (e, c) => post(e.sim, '/v3/search-tweets', { query: 'alice post', order: 'latest', ...withCursor(c) }),
    schema: (s) => s.tweetsPage,
    list: 'tweets',
    paged: true,
  },
  { name: 'POST /mentions', call: (e, c) => post(e.sim, '/v3/mentions', { query: 'bob', ...withCursor(c) }), schema: (s) => s.tweetsPage, list: 'tweets', paged: true },
  { name: 'POST /search-users', call: (e, c) => post(e.sim, '/v3/search-users', { query: 'u01', ...withCursor(c) }), schema: (s) => s.usersPage, list: 'users', paged: true },
  { name: 'GET /place', call: (e) => get(e.sim, `/v3/place?id=${e.spaceId}`), schema: (s) => s.place },
  { name: 'GET /list-tweets', call: (e, c) => get(e.sim, `/v3/list-tweets?list_id=${LIST}${q(c)}`), schema: (s) => s.tweetsPage, list: 'tweets', paged: true },
  { name: 'GET /list-members', call: (e, c) => get(e.sim, `/v3/list-members?list_id=${LIST}${q(c)}`), schema: (s) => s.usersIntPage, list: 'users', paged: true },
  {
    name: 'GET /list-followers',
    call: (e, c) => get(e.sim, `/v3/list-followers?list_link=${encodeURIComponent(`https://x.com/i/lists/${LIST}`)}${q(c)}`),
    schema: (s) => s.usersPage,
    list: 'users',
    paged: true,
  },
  {
    name: 'POST /community-members',
    call: (e, c) => post(e.sim, '/v3/community-members', { community_link: `https://x.com/i/communities/${COMMUNITY}`, ...withCursor(c) }),
    schema: (s) => s.communityUsersPage,
    list: 'users',
    paged: true,
  },
  {
    name: 'POST /community-tweets',
    call: (e, c) => post(e.sim, '/v3/community-tweets', { community_id: COMMUNITY, order: 'latest', ...withCursor(c) }),
    schema: (s) => s.tweetsPage,
    list: 'tweets',
    paged: true,
  },
  {
    name: 'POST /community-search-tweets',
    call: (e, c) => post(e.sim, '/v3/community-search-tweets', { community_link: COMMUNITY, query: 'hello', order: 'popular', ...withCursor(c) }),
    schema: (s) => s.tweetsPage,
    list: 'tweets',
    paged: true,
  },
  {
    name: 'GET /check-comment',
    call: (e) => get(e.sim, `/v3/check-comment?tweet_link=${e.tid(FX.aliceRoot)}&username=u003`),
    schema: (s) => s.checkComment,
  },
  { name: 'POST /check-follow', call: (e) => post(e.sim, '/v3/check-follow', { username_1: 'alice', user_link_2: 'https://x.com/u001' }), schema: (s) => s.checkFollow },
  { name: 'POST /check-retweet', call: (e) => post(e.sim, '/v3/check-retweet', { tweet_link: e.tid(2), username: 'bob' }), schema: (s) => s.checkRetweet },
  { name: 'POST /check-quoted', call: (e) => post(e.sim, '/v3/check-quoted', { tweet_link: e.tid(1), user_id: e.uid('bob') }), schema: (s) => s.checkQuoted },
  {
    name: 'POST /check-community-member',
    call: (e) => post(e.sim, '/v3/check-community-member', { community_id: COMMUNITY, username: 'alice' }),
    schema: (s) => s.checkCommunityMember,
  },
  { name: 'GET /key-usage-info', call: (e) => get(e.sim, '/v3/key-usage-info'), schema: (s) => s.keyUsage },
  { name: 'GET /username-to-id/{user_handle}', call: (e) => get(e.sim, '/v3/username-to-id/bob'), schema: (s) => s.id },
  { name: 'GET /id-to-username/{user_id}', call: (e) => get(e.sim, `/v3/id-to-username/${e.uid('bob')}`), schema: (s) => s.handle },
  { name: 'GET /link-to-id', call: (e) => get(e.sim, `/v3/link-to-id?link=${encodeURIComponent('https://x.com/bob')}`), schema: (s) => s.id },
  { name: 'GET /score', call: (e) => get(e.sim, '/v3/score?username=alice'), schema: (s) => s.score },
  { name: 'GET /score-changes', call: (e) => get(e.sim, '/v3/score-changes?username=alice'), schema: (s) => s.scoreChanges },
  { name: 'GET /followers-stats', call: (e) => get(e.sim, '/v3/followers-stats?username=alice'), schema: (s) => s.followersStats },
  { name: 'GET /top-followers', call: (e) => get(e.sim, '/v3/top-followers?username=alice'), schema: (s) => s.topFollowers, list: 'users' },
  { name: 'GET /top-following', call: (e) => get(e.sim, '/v3/top-following?username=alice'), schema: (s) => s.topFollowers, list: 'users' },
  { name: 'GET /new-followers-7d', call: (e) => get(e.sim, '/v3/new-followers-7d?username=alice'), schema: (s) => s.followers, list: 'users' },
  { name: 'GET /new-following-7d', call: (e) => get(e.sim, '/v3/new-following-7d?user_link=https://x.com/alice'), schema: (s) => s.followers, list: 'users' },
];

/** The cursor exactly as it stands in the answer's text (a JSON number keeps all its digits). */
function rawCursor(text: string): string | null {
  const m = /"next_cursor":(?:"((?:[^"\\]|\\.)*)"|(\d+)|null)/.exec(text);
  if (!m) return null;
  if (m[2] !== undefined) return m[2];
  return m[1] === undefined ? null : (JSON.parse(`"${m[1]}"`) as string);
}

it('covers each of the 40 endpoints of the reference once', () => {
  expect(ENDPOINTS.length).toBe(40);
  expect(new Set(ENDPOINTS.map((e) => e.name)).size).toBe(40);
});

describe.each(PROFILES)('profile %s', (profile: Profile) => {
  let env: Env;
  const schemas = referenceSchemas(profile);

  beforeAll(async () => {
    const sim = await startFixture({ profile });
    env = {
      sim,
      tid: (fixture) => sim.world.tweets.idString(fixture),
      uid: (handle) => sim.world.userByHandle(handle)!.id,
      spaceId: sim.world.spaces[0]!.id,
    };
  });
  afterAll(async () => {
    await env.sim.close();
  });

  it.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s answers the reference shape', async (_name, endpoint) => {
    const schema = endpoint.schema(schemas);
    let cursor: string | null = null;
    let items = 0;
    for (let page = 1; ; page++) {
      const res = await endpoint.call(env, cursor);
      expect(res.status, `${endpoint.name} page ${page}: ${res.text}`).toBe(200);
      const parsed = schema.safeParse(res.body);
      expect(parsed.success, `${endpoint.name} page ${page}: ${parsed.error?.message ?? ''}`).toBe(true);
      if (endpoint.list) items += ((res.body as Record<string, unknown[]>)[endpoint.list] ?? []).length;
      cursor = endpoint.paged ? rawCursor(res.text) : null;
      if (cursor === null) break;
      expect(page, 'the walk ends').toBeLessThan(20);
    }
    if (endpoint.list) expect(items, `${endpoint.name} returns something to check`).toBeGreaterThan(0);
  });
});
