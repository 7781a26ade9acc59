/** Community feeds: POST /v3/community-tweets and /v3/community-search-tweets, in both profiles. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { createWorld } from '../../src/simulator/world/index.ts';
import { FX, post, startFixture, walk } from './server-helpers.ts';
import { PROFILES } from './reference-schemas.ts';

const COMMUNITY = '1700000000000000002';

describe.each(PROFILES)('profile %s', (profile) => {
  let sim: RunningSimulator;
  const tid = (fixture: number): string => sim.world.tweets.idString(fixture);
  // the fixture feed: alice's 45 posts, the media tweet, u003's reply; carol's is protected
  const feedIds = (): string[] => [...Array.from({ length: 45 }, (_, k) => k), FX.mediaTweet, 52].map(tid).reverse();

  beforeAll(async () => {
    sim = await startFixture({ profile });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('community-tweets walks the whole feed newest first (latest is the default), each tweet once, protected authors left out', async () => {
    const r = await walk((c) => post(sim, '/v3/community-tweets', { community_id: COMMUNITY, ...(c ? { next_cursor: c } : {}) }), 'tweets');
    expect(r.items.map((t) => t.id)).toEqual(feedIds());
    expect(r.pages).toBe(3);
  });

  it('order popular ranks the same feed by engagement (likes + 2 × retweets + replies)', async () => {
    const r = await walk((c) => post(sim, '/v3/community-tweets', { community_id: COMMUNITY, order: 'popular', ...(c ? { next_cursor: c } : {}) }), 'tweets');
    expect(new Set(r.items.map((t) => t.id))).toEqual(new Set(feedIds()));
    const scores = r.items.map((t) => Number(t.likes_count) + 2 * Number(t.retweet_count) + Number(t.reply_count));
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(r.items.map((t) => t.id)).not.toEqual(feedIds());
  });

  it('community-search-tweets finds only the feed\'s tweets that match the query (by id or URL)', async () => {
    const r = await walk(
      (c) => post(sim, '/v3/community-search-tweets', { community_link: `https://x.com/i/communities/${COMMUNITY}`, query: 'reply', order: 'latest', ...(c ? { next_cursor: c } : {}) }),
      'tweets',
    );
    // 25 tweets say "reply"; only u003's is in the community
    expect(r.items.map((t) => t.id)).toEqual([tid(52)]);
    const media = await post(sim, '/v3/community-search-tweets', { community_link: COMMUNITY, query: 'filter:media', order: 'latest' });
    expect((media.body as { tweets: Array<{ id: string }> }).tweets.map((t) => t.id)).toEqual([tid(FX.mediaTweet)]);
    const all = await walk((c) => post(sim, '/v3/community-search-tweets', { community_link: COMMUNITY, order: 'latest', ...(c ? { next_cursor: c } : {}) }), 'tweets');
    expect(all.items.map((t) => t.id)).toEqual(feedIds());
  });

  it('answers 400 for a link as community_id, a bad order or query, and 404 for an unknown community', async () => {
    expect((await post(sim, '/v3/community-tweets', { community_id: `https://x.com/i/communities/${COMMUNITY}` })).status).toBe(400);
    expect((await post(sim, '/v3/community-tweets', {})).status).toBe(400);
    expect((await post(sim, '/v3/community-tweets', { community_id: COMMUNITY, order: 'oldest' })).status).toBe(400);
    expect((await post(sim, '/v3/community-search-tweets', { community_link: COMMUNITY, query: '(unbalanced' })).status).toBe(400);
    expect((await post(sim, '/v3/community-tweets', { community_id: '1' })).status).toBe(404);
    expect((await post(sim, '/v3/community-search-tweets', { community_link: '1', query: 'x' })).status).toBe(404);
  });

  it('a tweet posted in the community through test control heads the feed; a non-member cannot post there', async () => {
    const [id] = sim.control.addTweets([{ authorHandle: 'u010', text: 'fresh community post', communityId: COMMUNITY }]);
    const first = (await post(sim, '/v3/community-tweets', { community_id: COMMUNITY })).body as { tweets: Array<{ id: string }> };
    expect(first.tweets[0]?.id).toBe(id);
    expect(() => sim.control.addTweets([{ authorHandle: 'bob', text: 'not a member', communityId: COMMUNITY }])).toThrow(/not a member/);
  });
});

describe('generated worlds', () => {
  it('give every community a feed of its members\' posts, the same for the same seed', () => {
    const a = createWorld({ seed: 3 });
    const b = createWorld({ seed: 3 });
    for (const [k, c] of a.communities.entries()) {
      expect(c.tweets.length, c.id).toBeGreaterThan(0);
      expect(c.tweets).toEqual(b.communities[k]!.tweets);
      for (const i of c.tweets) {
        expect(c.members).toContain(a.tweets.author(i));
        expect(a.tweets.retweeted(i)).toBe(-1);
      }
      expect([...c.tweets]).toEqual([...c.tweets].sort((x, y) => x - y));
    }
  });
});
