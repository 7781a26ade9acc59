import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { basicAccount, newFollower, tweetV2, tweetV3, userV3 } from './server-schemas.ts';
import { FX, get, post, startSpecFixture, walk } from './server-helpers.ts';

let sim: RunningSimulator;
const tid = (fixture: number): string => sim.world.tweets.idString(fixture);
const tidUser = (handle: string): string => sim.world.userByHandle(handle)!.id;
const LIST = '1700000000000000001';
const COMMUNITY = '1700000000000000002';

beforeAll(async () => {
  sim = await startSpecFixture();
});
afterAll(async () => {
  await sim.close();
});

describe('v2 endpoints', () => {
  it('comments, list-tweets (cursor) and user-tweets (link|user_id, cursor) walk in v2 shapes', async () => {
    const c = await walk((cur) => post(sim, '/v2/comments', { tweet_link: tid(FX.aliceRoot), ...(cur ? { next_cursor: cur } : {}) }), 'comments');
    expect(c.items.length).toBe(25);
    for (const t of c.items) expect(tweetV2.parse(t).in_reply_to_status_id_str).toBe(tid(FX.aliceRoot));
    const l = await walk((cur) => get(sim, `/v2/list-tweets?list_id=${LIST}${cur ? `&cursor=${encodeURIComponent(cur)}` : ''}`), 'tweets');
    expect(new Set(l.items.map((t) => t.id_str)).size).toBe(l.items.length);
    const u = await walk((cur) => post(sim, '/v2/user-tweets', { link: 'https://x.com/alice', ...(cur ? { cursor: cur } : {}) }), 'tweets');
    expect(u.items.length).toBe(46);
    const byId = await post(sim, '/v2/user-tweets', { user_id: '1800000000000000001' });
    const bob = z.strictObject({ tweets: z.array(tweetV2), next_cursor: z.null() }).parse(byId.body);
    expect(bob.tweets[0]!.retweeted_status?.id_str).toBe(tid(2));
    expect(bob.tweets[1]!.quoted_status?.user.screen_name).toBe('alice');
    expect((await post(sim, '/v2/user-tweets', {})).status).toBe(400);
  });

  it('tweet-info, tweet-info-bulk (bare array), info/{handle}', async () => {
    const t = tweetV2.parse((await post(sim, '/v2/tweet-info', { tweet_link: `https://x.com/alice/status/${tid(3)}` })).body);
    expect(t.favorite_count).toBe(3);
    const bulk = await post(sim, '/v2/tweet-info-bulk', { tweet_links: [tid(1), tid(2)] });
    expect(z.array(tweetV2).parse(bulk.body).map((x) => x.id_str)).toEqual([tid(1), tid(2)]);
    expect((await post(sim, '/v2/tweet-info-bulk', { tweet_links: Array.from({ length: 101 }, () => tid(1)) })).status).toBe(400);
    const info = basicAccount.parse((await get(sim, '/v2/info/alice')).body);
    expect(info.screen_name).toBe('alice');
    expect((await get(sim, '/v2/info/carol')).status).toBe(404);
    expect((await get(sim, '/v2/info/bad-handle!')).status).toBe(400);
  });

  it('follows: bare array of 200 a page via page=N; new-following-7d with screeName', async () => {
    const p1 = z.array(basicAccount).parse((await get(sim, '/v2/follows?link=https://x.com/alice')).body);
    expect(p1.map((a) => a.screen_name)).toEqual(['bob']);
    const ids = await get(sim, `/v2/follows?user_id=${sim.world.userByHandle('u001')!.id}&order_by=score&page=1`);
    expect(z.array(basicAccount).parse(ids.body).map((a) => a.screen_name)).toEqual(['alice']);
    expect((await get(sim, '/v2/follows?link=https://x.com/alice&order_by=likes')).status).toBe(400);
    const nf = z.array(newFollower).parse((await get(sim, '/v2/new-following-7d?user_handle=alice')).body);
    expect(nf.length).toBeGreaterThan(0);
    expect(nf.length).toBeLessThanOrEqual(200);
    expect((await get(sim, '/v2/new-following-7d')).status).toBe(400);
  });

  it('check-comment and check-quoted (date as YYYY-MM-DD HH:MM:SS)', async () => {
    const cc = await get(sim, `/v2/check-comment?tweet_link=${tid(FX.aliceRoot)}&user_handle=u004`);
    const body = z.strictObject({ commented: z.boolean(), tweet: tweetV2.nullable() }).parse(cc.body);
    expect(body.commented).toBe(true);
    const q = await post(sim, '/v2/check-quoted', { tweet_link: tid(1), user_handle: 'bob' });
    expect(q.body).toEqual({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/), status: 'quoted', text: 'bob quotes alice', user_protected: false });
    const prot = await post(sim, '/v2/check-quoted', { tweet_link: tid(1), user_handle: 'carol' });
    expect(prot.body).toMatchObject({ user_protected: true });
    expect((await post(sim, '/v2/check-quoted', { tweet_link: tid(1) })).status).toBe(400);
  });
});

describe('other v3 endpoints', () => {
  it('info-batch, id conversions and link-to-id', async () => {
    const b = await get(sim, '/v3/info-batch?usernames=alice&usernames=bob&usernames=carol');
    expect(z.strictObject({ users: z.array(userV3) }).parse(b.body).users.map((u) => u.username)).toEqual(['alice', 'bob']);
    const many = Array.from({ length: 101 }, (_, k) => `usernames=u${String(k).padStart(3, '0')}`).join('&');
    expect((await get(sim, `/v3/info-batch?${many}`)).status).toBe(400);
    expect((await get(sim, '/v3/username-to-id/bob')).body).toEqual({ id: '1800000000000000001' });
    expect((await get(sim, '/v3/id-to-username/1800000000000000001')).body).toEqual({ handle: 'bob' });
    expect((await get(sim, '/v3/username-to-id/dave')).status).toBe(404);
    expect((await get(sim, '/v3/link-to-id?link=https://x.com/bob')).body).toEqual({ id: '1800000000000000001' });
    expect((await get(sim, `/v3/link-to-id?link=https://x.com/i/lists/${LIST}`)).status).toBe(400);
    expect((await get(sim, '/v3/link-to-id?link=https://example.com')).status).toBe(400);
  });

  it('quotes, retweets and the retweeters alias, search-users', async () => {
    const q = await post(sim, '/v3/quotes', { tweet_link: tid(1) });
    expect(z.strictObject({ tweets: z.array(tweetV3), next_cursor: z.null() }).parse(q.body).tweets.map((t) => t.full_text)).toEqual(['bob quotes alice']);
    // the spec profile also serves the spec's /v3/retweets beside production's /v3/retweeters
    for (const path of ['/v3/retweets', '/v3/retweeters']) {
      const r = await post(sim, path, { tweet_link: tid(2) });
      expect(z.strictObject({ users: z.array(userV3), next_cursor: z.null() }).parse(r.body).users.map((u) => u.username)).toEqual(['bob']);
    }
    const s = await walk((c) => post(sim, '/v3/search-users', { query: 'u0', ...(c ? { next_cursor: c } : {}) }), 'users');
    expect(s.items.length).toBe(100);
    expect((await post(sim, '/v3/search-users', { query: '  ' })).status).toBe(400);
  });

  it('check-follow (does side 2 follow side 1), check-retweet, check-quoted, check-community-member: POST bodies', async () => {
    expect((await post(sim, '/v3/check-follow', { username_1: 'alice', username_2: 'u001' })).body).toEqual({ follow: true, user_protected: false });
    expect((await post(sim, '/v3/check-follow', { username_1: 'u001', user_id_2: tidUser('alice') })).body).toEqual({ follow: false, user_protected: false });
    expect((await post(sim, '/v3/check-follow', { username_1: 'alice', username_2: 'carol' })).body).toEqual({ follow: false, user_protected: true });
    expect((await post(sim, '/v3/check-follow', { username_1: 'u001' })).status).toBe(400);
    expect((await get(sim, '/v3/check-follow?username_1=alice&username_2=u001')).status).toBe(404);
    expect((await post(sim, '/v3/check-retweet', { tweet_link: tid(2), username: 'bob' })).body).toEqual({ retweet: true, user_protected: false, next_cursor: null });
    expect((await post(sim, '/v3/check-retweet', { tweet_link: tid(3), username: 'bob' })).body).toEqual({ retweet: false, user_protected: false, next_cursor: null });
    expect((await post(sim, '/v3/check-quoted', { tweet_link: tid(1), username: 'bob' })).body).toEqual({
      status: 'quoted', date: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/), text: 'bob quotes alice', user_protected: false,
    });
    expect((await post(sim, '/v3/check-quoted', { tweet_link: tid(2), username: 'bob' })).body).toMatchObject({ status: 'retweet', text: null });
    expect((await post(sim, '/v3/check-quoted', { tweet_link: tid(3), username: 'bob' })).body).toEqual({ status: 'not_found', date: null, text: null, user_protected: false });
    expect((await post(sim, '/v3/check-community-member', { community_id: COMMUNITY, username: 'alice' })).body).toEqual({ is_member: true });
    expect((await post(sim, '/v3/check-community-member', { community_id: COMMUNITY, username: 'bob' })).body).toEqual({ is_member: false });
    expect((await post(sim, '/v3/check-community-member', { community_id: `https://x.com/i/communities/${COMMUNITY}`, username: 'bob' })).status).toBe(400);
  });

  it('about, score, article (POST, no id, views_count, author)', async () => {
    expect((await get(sim, '/v3/about?username=alice')).body).toEqual({
      country: expect.any(String), username_change_count: expect.any(Number), last_username_change_at: expect.toSatisfy((v) => v === null || typeof v === 'string'),
    });
    expect((await get(sim, '/v3/score?username=alice')).body).toEqual({ score: expect.any(Number) });
    const a = await post(sim, '/v3/article', { tweet_link: tid(4) });
    expect(a.body).toMatchObject({ full_text: 'alice post 4 hello @bob', likes_count: 4, views_count: 0, author: { username: 'alice' } });
    expect(a.body).not.toHaveProperty('id');
    expect((await post(sim, '/v3/article', { tweet_link: tid(FX.carolTweet) })).status).toBe(404);
  });
});
