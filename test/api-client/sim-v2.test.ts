/** Every v2 method against the simulator, and the 410 every /v2 path answers once retired. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoneError } from '../../src/api-client/errors.ts';
import { startHarness, walk, type SimHarness } from './sim-setup.ts';

let h: SimHarness;

beforeAll(async () => {
  h = await startHarness({ profile: 'spec' });
});

afterAll(async () => {
  await h?.close();
});

describe('v2 tweets', () => {
  it('walks user tweets with the v2 cursor parameter to the end', async () => {
    const { author, authorTweetIds } = h.fx;
    const result = await walk((cursor) => h.client.v2.userTweets({ userId: author.id, ...(cursor ? { cursor } : {}) }));
    expect(result.ended).toBe(true);
    expect(result.items.map((t) => t.id).sort()).toEqual([...authorTweetIds].sort());
    expect(result.items.every((t) => t.source === 'v2' && t.author?.source === 'v2-embedded')).toBe(true);
  });

  it('comments, list tweets, tweet info (with its embedded quote) and bulk', async () => {
    const { reply, quote, list } = h.fx;
    const comments = await walk((cursor) => h.client.v2.comments({ tweetLink: reply.parentId, ...(cursor ? { cursor } : {}) }));
    expect(comments.items.some((t) => t.id === reply.id)).toBe(true);
    expect((await h.client.v2.listTweets({ listId: list.id })).items.length).toBeGreaterThan(0);
    const t = await h.client.v2.tweetInfo(`https://x.com/${quote.by.username}/status/${quote.id}`);
    expect(t.id).toBe(quote.id);
    expect(t.quotedTweetId).toBe(quote.quotedId);
    expect(t.quoted?.source).toBe('v2-embedded');
    expect(t.createdAt.getTime()).toBe(Math.floor(quote.createdAtMs / 1000) * 1000);
    const bulk = await h.client.v2.tweetInfoBulk([reply.id, quote.id]);
    expect(bulk.items.map((x) => x.id).sort()).toEqual([reply.id, quote.id].sort());
    expect(bulk.nextCursor).toBeNull();
  });

  it('check-comment and check-quoted (date in the YYYY-MM-DD HH:MM:SS form)', async () => {
    const { reply, quote } = h.fx;
    const c = await h.client.v2.checkComment({ tweetLink: reply.parentId, userHandle: reply.by.username });
    expect(c.commented).toBe(true);
    expect(c.tweet?.source).toBe('v2');
    const q = await h.client.v2.checkQuoted({ tweetLink: quote.quotedId, userHandle: quote.by.username });
    expect(q.status).toBe('quoted');
    expect((q.raw as { date: string }).date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(q.date?.getTime()).toBe(Math.floor(quote.createdAtMs / 1000) * 1000);
  });
});

describe('v2 users', () => {
  it('info, follows and new followers', async () => {
    const { followed, bigIdUser } = h.fx;
    const basic = await h.client.v2.info(bigIdUser.username);
    expect(basic.id).toBe(bigIdUser.id);
    expect(basic.source).toBe('v2-basic');
    const follows = await h.client.v2.follows({ userId: followed.id });
    expect(follows.items.length).toBeGreaterThan(0);
    expect(follows.items[0]?.source).toBe('v2-basic');
    const fresh = await h.client.v2.newFollowing7d({ userHandle: followed.username });
    expect(fresh.quarantined).toEqual([]);
    for (const u of fresh.items) expect(u.source).toBe('v2-new-follower');
  });
});

describe('v2 retired', () => {
  it('answers 410 as a GoneError naming the v3 counterpart, without retrying', async () => {
    h.sim.control.setQuirks({ v2Gone: true });
    const before = h.attempts.length;
    try {
      const error = await h.client.v2.comments({ tweetLink: h.fx.reply.parentId }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GoneError);
      expect((error as GoneError).status).toBe(410);
      expect((error as GoneError).message).toContain('/v2/comments is retired (410); use POST /v3/comments');
      expect((error as GoneError).replacement).toBe('POST /v3/comments');
      const info = await h.client.v2.info(h.fx.author.username).catch((e: unknown) => e);
      expect((info as GoneError).replacement).toBe('GET /v3/info');
      // One 410 per call, never retried. (The test client has no limiter, so a call may also
      // meet the simulator's per-second limit first: its 429 is retried and does not count here.)
      expect(h.attempts.slice(before).filter((a) => a.status !== 429).map((a) => a.status)).toEqual([410, 410]);
    } finally {
      h.sim.control.setQuirks({ v2Gone: false });
    }
  });
});
