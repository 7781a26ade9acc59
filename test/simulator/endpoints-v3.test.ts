import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { ISO_RE, message, reducedUser, space, tweetV3, tweetsPage, usage, userV3, usersPage } from './server-schemas.ts';
import { FX, get, post, startSpecFixture, walk } from './server-helpers.ts';

let sim: RunningSimulator;
const tid = (fixture: number): string => sim.world.tweets.idString(fixture);
const LIST = '1700000000000000001';
const COMMUNITY = '1700000000000000002';

beforeAll(async () => {
  sim = await startSpecFixture();
});
afterAll(async () => {
  await sim.close();
});

function uniqueIds(items: Array<Record<string, unknown>>): Set<string> {
  const ids = new Set(items.map((t) => String(t.id)));
  expect(ids.size).toBe(items.length);
  return ids;
}

describe('GET /v3/info', () => {
  it('answers a full v3 user by username, user_id (exact above 2^53) or user_link', async () => {
    const a = await get(sim, '/v3/info?username=alice');
    expect(a.status).toBe(200);
    const alice = userV3.parse(a.body);
    expect(alice).toMatchObject({ username: 'alice', verified: true, bio_urls: ['https://alice.example'], pinned_tweet_ids: null });
    expect(alice.created_at).toMatch(ISO_RE);
    const b = await get(sim, '/v3/info?user_id=1800000000000000001');
    expect(b.text).toContain('"id":"1800000000000000001"');
    expect(userV3.parse(b.body).username).toBe('bob');
    const c = await get(sim, `/v3/info?user_link=${encodeURIComponent('https://x.com/alice')}`);
    expect(userV3.parse(c.body).id).toBe(alice.id);
  });

  it('answers 400 {message} unless exactly one well-formed identifier is given', async () => {
    for (const q of ['', '?username=alice&user_id=1', '?user_id=12ab', '?username=a-b', '?user_link=https://example.com/alice']) {
      const r = await get(sim, `/v3/info${q}`);
      expect(r.status, q).toBe(400);
      message.parse(r.body);
    }
  });

  it('answers 404 for protected, suspended, deleted and unknown users', async () => {
    for (const h of ['carol', 'dave', 'erin', 'nobody_here']) {
      const r = await get(sim, `/v3/info?username=${h}`);
      expect(r.status, h).toBe(404);
      message.parse(r.body);
    }
  });
});

describe('POST /v3/search-tweets and /v3/mentions', () => {
  it('walks a search to its end, each tweet once, ids exact strings above 2^53', async () => {
    const { items, pages } = await walk((c) => post(sim, '/v3/search-tweets', { query: 'hello', order: 'latest', ...(c ? { next_cursor: c } : {}) }), 'tweets');
    expect(items.length).toBe(45);
    expect(pages).toBe(3);
    uniqueIds(items);
    for (const t of items) expect(BigInt(tweetV3.parse(t).id) > 2n ** 53n).toBe(true);
    const first = await post(sim, '/v3/search-tweets', { query: 'hello' });
    tweetsPage.parse(first.body);
    const cursor = (first.body as { next_cursor: string }).next_cursor;
    expect(cursor.length).toBeGreaterThanOrEqual(300);
  });

  it('answers 400 for a missing or malformed query, bad order, garbled or foreign cursor', async () => {
    expect((await post(sim, '/v3/search-tweets', {})).status).toBe(400);
    expect((await post(sim, '/v3/search-tweets', { query: '(hello' })).status).toBe(400);
    expect((await post(sim, '/v3/search-tweets', { query: 'hello', order: 'oldest' })).status).toBe(400);
    expect((await post(sim, '/v3/search-tweets', { query: 'hello', next_cursor: 'garbage' })).status).toBe(400);
    const first = (await post(sim, '/v3/search-tweets', { query: 'hello' })).body as { next_cursor: string };
    const garbled = first.next_cursor.slice(0, 100) + (first.next_cursor[100] === 'A' ? 'B' : 'A') + first.next_cursor.slice(101);
    expect((await post(sim, '/v3/search-tweets', { query: 'hello', next_cursor: garbled })).status).toBe(400);
    expect((await post(sim, '/v3/search-tweets', { query: 'alice', next_cursor: first.next_cursor })).status).toBe(400);
  });

  it('mentions return only tweets tagging the handle, filtered by every body field', async () => {
    const all = await walk((c) => post(sim, '/v3/mentions', { query: 'bob', ...(c ? { next_cursor: c } : {}) }), 'tweets');
    expect(all.items.length).toBeGreaterThanOrEqual(45);
    for (const t of all.items) expect(String(t.full_text)).toContain('@bob');
    const liked = await post(sim, '/v3/mentions', { query: 'bob', min_likes: 40, order: 'popular' });
    expect(liked.status).toBe(200);
    const likes = tweetsPage.parse(liked.body).tweets.map((t) => t.likes_count);
    expect(likes.length).toBe(5);
    expect(Math.min(...likes)).toBeGreaterThanOrEqual(40);
    const day = await post(sim, '/v3/mentions', { query: 'bob', since_date: '2026-01-11', until_date: '2026-01-12' });
    expect(tweetsPage.parse(day.body).tweets).toEqual([]);
    expect((await post(sim, '/v3/mentions', { query: 'bob', since_date: '2026/01/10' })).status).toBe(400);
    expect((await post(sim, '/v3/mentions', { query: 'bob', min_likes: -1 })).status).toBe(400);
    expect((await post(sim, '/v3/mentions', {})).status).toBe(400);
  });
});

describe('POST /v3/user-tweets', () => {
  it('walks a timeline newest first by username, user_id or user_link', async () => {
    const byName = await walk((c) => post(sim, '/v3/user-tweets', { username: 'alice', ...(c ? { next_cursor: c } : {}) }), 'tweets');
    expect(byName.items.length).toBe(46);
    uniqueIds(byName.items);
    const times = byName.items.map((t) => Date.parse(String(t.created_at)));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const bob = await post(sim, '/v3/user-tweets', { user_id: '1800000000000000001' });
    expect(tweetsPage.parse(bob.body).tweets.map((t) => t.full_text)).toEqual(['RT @alice: alice post 2 hello @bob', 'bob quotes alice']);
    const link = await post(sim, '/v3/user-tweets', { user_link: 'https://twitter.com/bob' });
    expect(tweetsPage.parse(link.body).tweets.length).toBe(2);
    expect((await post(sim, '/v3/user-tweets', { username: 'carol' })).status).toBe(404);
    expect((await post(sim, '/v3/user-tweets', {})).status).toBe(400);
    expect((await post(sim, '/v3/user-tweets', { user_id: 42 })).status).toBe(400);
  });
});

describe('lists, communities, spaces', () => {
  it('list-followers by URL, list-members with numeric cursors', async () => {
    const f = await walk((c) => get(sim, `/v3/list-followers?list_link=${encodeURIComponent(`https://x.com/i/lists/${LIST}`)}${c ? `&next_cursor=${encodeURIComponent(c)}` : ''}`), 'users');
    expect(f.items.length).toBe(30);
    for (const u of f.items) userV3.parse(u);
    const m = await walk((c) => get(sim, `/v3/list-members?list_id=${LIST}${c ? `&next_cursor=${c}` : ''}`), 'users');
    expect(m.items.length).toBe(45);
    uniqueIds(m.items);
    for (const c of m.cursors) expect(c).toMatch(/^\d{19,}$/);
    expect((await get(sim, '/v3/list-members?list_id=999')).status).toBe(404);
    expect((await get(sim, '/v3/list-followers')).status).toBe(400);
  });

  it('list-tweets are tweets by the list members', async () => {
    const r = await walk((c) => get(sim, `/v3/list-tweets?list_id=${LIST}${c ? `&next_cursor=${encodeURIComponent(c)}` : ''}`), 'tweets');
    uniqueIds(r.items);
    const members = new Set(['alice', 'bob', ...Array.from({ length: 43 }, (_, k) => `u${String(k).padStart(3, '0')}`)]);
    expect(r.items.length).toBeGreaterThan(40);
    for (const t of r.items) expect(members.has(String((t.user as { username: string }).username))).toBe(true);
  });

  it('community-members by id or URL as reduced users, protected members included', async () => {
    const r = await walk((c) => post(sim, '/v3/community-members', { community_link: `https://x.com/i/communities/${COMMUNITY}`, ...(c ? { next_cursor: c } : {}) }), 'users');
    expect(r.items.length).toBe(43);
    for (const u of r.items) reducedUser.parse(u);
    expect(r.items.some((u) => u.username === 'carol' && u.protected === true)).toBe(true);
    expect((await post(sim, '/v3/community-members', { community_link: '123' })).status).toBe(404);
    expect((await post(sim, '/v3/community-members', { community_link: 'https://x.com/i/lists/1' })).status).toBe(400);
  });

  it('place by id or link', async () => {
    const id = sim.world.spaces[0]!.id;
    const r = await get(sim, `/v3/place?id=${id}`);
    const s = space.parse(r.body);
    expect(s.participants.speakers.map((p) => p.username)).toEqual(['bob']);
    const byLink = await get(sim, `/v3/place?link=${encodeURIComponent(`https://x.com/i/spaces/${id}`)}`);
    expect(space.parse(byLink.body).id).toBe(id);
    expect((await get(sim, '/v3/place?id=nosuchspace')).status).toBe(404);
    expect((await get(sim, '/v3/place')).status).toBe(400);
  });
});

describe('tweets, comments, follows, checks', () => {
  it('tweet-info renders quoted and retweeted statuses as full tweets and entities', async () => {
    const q = tweetV3.parse((await post(sim, '/v3/tweet-info', { tweet_link: `https://x.com/bob/status/${tid(FX.bobQuote)}` })).body);
    expect(q.is_quote_status).toBe(true);
    expect(q.quoted_status?.id).toBe(tid(1));
    expect(q.retweeted_status).toBeNull();
    const rt = tweetV3.parse((await post(sim, '/v3/tweet-info', { tweet_link: tid(FX.bobRetweet) })).body);
    expect(rt.retweeted_status?.id).toBe(tid(2));
    const m = tweetV3.parse((await post(sim, '/v3/tweet-info', { tweet_link: tid(FX.mediaTweet) })).body);
    expect(m.entities).toEqual([
      { type: 'photo', link: 'https://pbs.twimg.com/media/a.jpg', preview: 'https://pbs.twimg.com/media/a_small.jpg' },
      { type: 'url', link: 'https://example.com/article', preview: 'https://example.com/article' },
    ]);
    const plain = tweetV3.parse((await post(sim, '/v3/tweet-info', { tweet_link: tid(5) })).body);
    expect(plain.entities).toEqual([]);
    expect(plain.in_reply_to_tweet_id).toBeNull();
    expect((await post(sim, '/v3/tweet-info', { tweet_link: tid(FX.carolTweet) })).status).toBe(404);
    expect((await post(sim, '/v3/tweet-info', { tweet_link: 'https://x.com/alice/status/abc' })).status).toBe(400);
    expect((await post(sim, '/v3/tweet-info', { tweet_link: '1234' })).status).toBe(404);
  });

  it('tweet-info-bulk takes tweet_links, answers {tweets}, leaves out non-public ones and refuses more than 100', async () => {
    const r = await post(sim, '/v3/tweet-info-bulk', { tweet_links: [tid(1), `https://x.com/a/status/${tid(2)}`, tid(FX.carolTweet)] });
    const body = z.strictObject({ tweets: z.array(tweetV3) }).parse(r.body);
    expect(body.tweets.map((t) => t.id)).toEqual([tid(1), tid(2)]);
    expect((await post(sim, '/v3/tweet-info-bulk', { tweet_links: Array.from({ length: 101 }, () => tid(1)) })).status).toBe(400);
    expect((await post(sim, '/v3/tweet-info-bulk', { tweet_links: [] })).status).toBe(400);
    // the field of an earlier client, which production does not know
    expect((await post(sim, '/v3/tweet-info-bulk', { tweets: [tid(1)] })).status).toBe(400);
  });

  it('comments walk every reply once in each order_by, as `tweets`', async () => {
    for (const order_by of ['Relevance', 'Recency', 'Likes']) {
      const r = await walk((c) => post(sim, '/v3/comments', { tweet_link: tid(FX.aliceRoot), order_by, ...(c ? { next_cursor: c } : {}) }), 'tweets');
      expect(r.items.length, order_by).toBe(25);
      uniqueIds(r.items);
      for (const t of r.items) expect(tweetV3.parse(t).in_reply_to_tweet_id).toBe(tid(FX.aliceRoot));
      if (order_by === 'Likes') {
        const likes = r.items.map((t) => Number(t.likes_count));
        expect([...likes].sort((a, b) => b - a)).toEqual(likes);
      }
    }
    expect((await post(sim, '/v3/comments', { tweet_link: tid(0), order_by: 'Oldest' })).status).toBe(400);
  });

  it('followers, follows and verified-followers page by 200 with numeric cursors', async () => {
    const f = await walk((c) => get(sim, `/v3/followers?username=alice${c ? `&next_cursor=${c}` : ''}`), 'users');
    expect(f.pages).toBe(3);
    expect(f.items.length).toBe(451);
    uniqueIds(f.items);
    expect(f.items.some((u) => u.username === 'dave')).toBe(false);
    for (const c of f.cursors) expect(c).toMatch(/^\d+$/);
    usersPage.parse((await get(sim, '/v3/followers?username=alice')).body);
    const v = await walk((c) => get(sim, `/v3/verified-followers?user_id=${sim.world.userByHandle('alice')!.id}${c ? `&next_cursor=${c}` : ''}`), 'users');
    expect(v.items.length).toBe(45);
    const follows = usersPage.parse((await get(sim, '/v3/follows?user_link=https://x.com/alice')).body);
    expect(follows.users.map((u) => u.username)).toEqual(['bob']);
    expect(follows.next_cursor).toBeNull();
  });

  it('check-comment finds the reply of a user, not of others', async () => {
    const yes = await get(sim, `/v3/check-comment?tweet_link=${tid(FX.aliceRoot)}&username=u003`);
    const body = z.strictObject({ commented: z.boolean(), tweet: tweetV3.nullable() }).parse(yes.body);
    expect(body.commented).toBe(true);
    expect(body.tweet?.full_text).toBe('reply 3 @alice');
    const no = await get(sim, `/v3/check-comment?tweet_link=${tid(FX.aliceRoot)}&username=bob`);
    expect(no.body).toEqual({ commented: false, tweet: null });
    expect((await get(sim, `/v3/check-comment?tweet_link=${tid(FX.aliceRoot)}`)).status).toBe(400);
  });

  it('key-usage-info answers the usage record', async () => {
    usage.parse((await get(sim, '/v3/key-usage-info')).body);
  });
});
