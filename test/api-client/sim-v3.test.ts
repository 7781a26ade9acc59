/** Every v3 method against the project's simulator over real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalTweet } from '../../src/api-client/canonical.ts';
import { startHarness, walk, type SimHarness } from './sim-setup.ts';

let h: SimHarness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

const TWO_53 = 2n ** 53n;

describe('v3 users', () => {
  it('info by username, user id and profile link, with ids above 2^53 exact', async () => {
    const { bigIdUser, author } = h.fx;
    const byId = await h.client.info({ userId: bigIdUser.id });
    expect(byId.id).toBe(bigIdUser.id);
    expect(BigInt(byId.id) > TWO_53).toBe(true);
    expect(byId.username).toBe(bigIdUser.username);
    expect(byId.createdAt?.getTime()).toBe(Math.floor(bigIdUser.createdAtMs / 1000) * 1000);
    expect(byId.source).toBe('v3');
    expect((await h.client.info({ username: author.username })).id).toBe(author.id);
    expect((await h.client.info({ userLink: `https://x.com/${author.username}` })).id).toBe(author.id);
  });

  it('followers, follows, verified followers, info-batch and user search', async () => {
    const { followed, author } = h.fx;
    const followers = await h.client.followers({ userId: followed.id });
    expect(followers.items.length).toBeGreaterThan(0);
    expect(followers.quarantined).toEqual([]);
    const follows = await h.client.follows({ username: followed.username });
    expect(follows.items.length).toBeGreaterThan(0);
    const verified = await h.client.verifiedFollowers({ userId: followed.id });
    expect(verified.items.every((u) => u.verified === true || (u.raw as { is_blue_verified?: boolean }).is_blue_verified !== false)).toBe(true);
    const batch = await h.client.infoBatch({ usernames: [author.username, followed.username] });
    expect(batch.items.map((u) => u.id).sort()).toEqual([author.id, followed.id].sort());
    const byIds = await h.client.infoBatch({ userIds: [author.id] });
    expect(byIds.items[0]?.id).toBe(author.id);
    const found = await h.client.searchUsers({ query: author.username });
    expect(found.items.some((u) => u.id === author.id)).toBe(true);
  });

  it('list followers, list members and community members (reduced users)', async () => {
    const { list, community } = h.fx;
    expect((await h.client.listMembers({ listId: list.id })).items.length).toBeGreaterThan(0);
    expect((await h.client.listFollowers({ listLink: list.id })).items.length).toBeGreaterThan(0);
    const members = await h.client.communityMembers({ communityLink: community.id });
    expect(members.items.length).toBeGreaterThan(0);
    expect(members.items[0]?.source).toBe('v3-reduced');
  });

  it('identifier conversions, place, key usage and a raw call', async () => {
    const { author, space } = h.fx;
    expect(await h.client.usernameToId(author.username)).toBe(author.id);
    expect(await h.client.idToUsername(author.id)).toBe(author.username);
    expect(await h.client.linkToId(`https://x.com/${author.username}`)).toBe(author.id);
    const s = await h.client.place({ id: space.id });
    expect(s.id).toBe(space.id);
    expect(s.title).toBe(space.title);
    const usage = await h.client.keyUsageInfo();
    // Production's reading: key_requests is the period's allotment, total_requests the requests used.
    expect(usage.keyRequests).toBe(usage.totalRequests! + usage.remainingRequests);
    expect(usage.totalRequests).toBeGreaterThan(0);
    const about = await h.client.about({ username: author.username });
    expect(about.raw).toBeTypeOf('object');
    expect(about.usernameChangeCount === null || about.usernameChangeCount >= 0).toBe(true);
  });

  it("the service's index: score, score changes, followers stats, top and new followers", async () => {
    const { followed } = h.fx;
    const user = { userId: followed.id };
    expect(typeof (await h.client.score(user))).toBe('number');
    const changes = await h.client.scoreChanges(user);
    expect([typeof changes.weekDelta, typeof changes.monthDelta]).toEqual(['number', 'number']);
    expect((await h.client.followersStats(user)).followersCount).toBeGreaterThanOrEqual(0);
    for (const list of [await h.client.topFollowers(user), await h.client.topFollowing(user)]) {
      expect(list.quarantined).toEqual([]);
      expect(list.items.length).toBeLessThanOrEqual(20);
      expect(list.items.every((x) => x.user.source === 'v3-top-follower')).toBe(true);
    }
    for (const list of [await h.client.newFollowers7d(user), await h.client.newFollowing7d(user)]) {
      expect(list.quarantined).toEqual([]);
      expect(list.items.every((x) => x.user.source === 'v3-follower')).toBe(true);
    }
  });
});

describe('v3 communities, checks and lookups', () => {
  it('community feed, search inside it and the membership check', async () => {
    const { community } = h.fx;
    const feed = await h.client.communityTweets({ communityId: community.id, order: 'latest' });
    expect(feed.quarantined).toEqual([]);
    const search = await h.client.communitySearchTweets({ communityLink: community.id, query: 'a' });
    expect(search.quarantined).toEqual([]);
    const members = await h.client.communityMembers({ communityLink: community.id });
    const member = members.items[0]!;
    expect(await h.client.checkCommunityMember({ communityId: community.id, userId: member.id })).toBe(true);
  });

  it('check-follow, check-retweet, article and trends', async () => {
    const { followed, retweet } = h.fx;
    const followers = await h.client.followers({ userId: followed.id });
    const follower = followers.items[0]!;
    const f = await h.client.checkFollow({ followed: { userId: followed.id }, follower: { userId: follower.id } });
    expect(f.follow).toBe(true);
    const retweeters = await h.client.retweeters({ tweetLink: retweet.originalId });
    const r = await h.client.checkRetweet({ tweetLink: retweet.originalId, userId: retweeters.items[0]!.id });
    expect(typeof r.retweet).toBe('boolean');
    const trends = await h.client.trends({ woeid: 1 });
    expect(trends.quarantined).toEqual([]);
  });
});

describe('v3 tweets', () => {
  it('walks a user timeline to the null cursor, every tweet once', async () => {
    const { author, authorTweetIds } = h.fx;
    const result = await walk((cursor) => h.client.userTweets({ userId: author.id, ...(cursor ? { cursor } : {}) }));
    expect(result.ended).toBe(true);
    expect(result.pages).toBeGreaterThan(1);
    const ids = result.items.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...authorTweetIds].sort());
    expect(result.items.every((t) => t.authorId === author.id)).toBe(true);
  });

  it('search and mentions', async () => {
    const { author, mentioned } = h.fx;
    const page = await h.client.searchTweets({ query: `from:${author.username}`, order: 'latest' });
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.items.every((t) => t.author?.username === author.username)).toBe(true);
    const m = await h.client.mentions({ query: mentioned.username, order: 'latest' });
    expect(m.items.length).toBeGreaterThan(0);
    expect(m.items.every((t) => t.mentions.includes(mentioned.username.toLowerCase()))).toBe(true);
  });

  it('tweet info and bulk, ids above 2^53 exact', async () => {
    const { reply, quote } = h.fx;
    const t = await h.client.tweetInfo(reply.id);
    expect(t.id).toBe(reply.id);
    expect(BigInt(t.id) > TWO_53).toBe(true);
    expect(t.inReplyToTweetId).toBe(reply.parentId);
    expect(t.isReply).toBe(true);
    expect(t.createdAt.getTime()).toBe(Math.floor(reply.createdAtMs / 1000) * 1000);
    const bulk = await h.client.tweetInfoBulk([reply.id, quote.id]);
    expect(bulk.items.map((x) => x.id).sort()).toEqual([reply.id, quote.id].sort());
    const q = bulk.items.find((x) => x.id === quote.id) as CanonicalTweet;
    expect(q.quotedTweetId).toBe(quote.quotedId);
  });

  it('comments, quotes, retweeters and list tweets', async () => {
    const { reply, quote, retweet, list } = h.fx;
    const comments = await walk((cursor) => h.client.comments({ tweetLink: reply.parentId, orderBy: 'Recency', ...(cursor ? { cursor } : {}) }));
    expect(comments.items.some((t) => t.id === reply.id)).toBe(true);
    const quotes = await walk((cursor) => h.client.quotes({ tweetLink: quote.quotedId, ...(cursor ? { cursor } : {}) }));
    expect(quotes.items.some((t) => t.id === quote.id && t.quotedTweetId === quote.quotedId)).toBe(true);
    const retweeters = await h.client.retweeters({ tweetLink: retweet.originalId });
    expect(retweeters.items.length).toBeGreaterThan(0);
    const lt = await h.client.listTweets({ listId: list.id });
    expect(lt.items.length).toBeGreaterThan(0);
  });

  it('check-comment (v3) and check-quoted', async () => {
    const { reply, quote } = h.fx;
    const c = await h.client.checkComment({ tweetLink: reply.parentId, userId: reply.by.id });
    expect(c.commented).toBe(true);
    expect(c.tweet?.inReplyToTweetId).toBe(reply.parentId);
    const q = await h.client.checkQuoted({ tweetLink: quote.quotedId, userId: quote.by.id });
    expect(['quoted', 'retweet']).toContain(q.status);
    expect(q.date).toBeInstanceOf(Date);
  });

  it('reads both timestamp forms (legacyTimestamps quirk)', async () => {
    const { reply } = h.fx;
    const expected = Math.floor(reply.createdAtMs / 1000) * 1000;
    h.sim.control.setQuirks({ legacyTimestamps: true });
    try {
      const legacy = await h.client.tweetInfo(reply.id);
      expect((legacy.raw as { created_at: string }).created_at).toMatch(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} /);
      expect(legacy.createdAt.getTime()).toBe(expected);
    } finally {
      h.sim.control.setQuirks({ legacyTimestamps: false });
    }
    const iso = await h.client.tweetInfo(reply.id);
    expect((iso.raw as { created_at: string }).created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(iso.createdAt.getTime()).toBe(expected);
  });

  it('records an attempt per request, named by fingerprint', () => {
    expect(h.attempts.length).toBeGreaterThan(10);
    expect(h.attempts.every((a) => /^k_[0-9a-f]{12}$/.test(a.keyFingerprint))).toBe(true);
    // The static gate does not pace requests, so a fast page walk may meet the 20 req/s limit;
    // those 429s were retried (every call above succeeded).
    expect(h.attempts.filter((a) => a.status !== 200 && a.status !== 429)).toEqual([]);
    const logged = h.sim.control.requestLog();
    expect(logged.length).toBe(h.attempts.length);
  });
});
