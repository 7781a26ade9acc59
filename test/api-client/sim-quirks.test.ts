/** The production service's quirks, as the simulator plays them, read without loss. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/api-client/errors.ts';
import { InputError } from '../../src/errors.ts';
import { catalog } from '../../src/simulator/world/catalog.ts';
import { startHarness, walk, type SimHarness } from './sim-setup.ts';

let h: SimHarness;

beforeAll(async () => {
  h = await startHarness({
    quirks: { legacyTimestamps: true, explicitNulls: true, extraFields: true, shortPages: true, malformedBodyEmpty: true },
  });
});

afterAll(async () => {
  await h?.close();
});

describe('production quirks', () => {
  it('walks short pages to the null cursor with legacy timestamps, explicit nulls and extra fields', async () => {
    const { author, authorTweetIds } = h.fx;
    const sizes: number[] = [];
    const result = await walk(async (cursor) => {
      const page = await h.client.userTweets({ username: author.username, ...(cursor ? { cursor } : {}) });
      sizes.push(page.items.length);
      expect(page.quarantined).toEqual([]);
      return page;
    });
    expect(result.ended).toBe(true);
    // 5, 12, 18 items while more exist: a short page is not the end.
    expect(sizes[0]).toBe(5);
    expect(result.items.map((t) => t.id).sort()).toEqual([...authorTweetIds].sort());
    const first = result.items[0]!;
    expect((first.raw as Record<string, unknown>).made_with_ai).toBe(false);
    expect((first.raw as { created_at: string }).created_at).toMatch(/ \+0000 \d{4}$/);
    expect(first.author?.createdAt).toBeInstanceOf(Date);
  });

  it('keeps explicit nulls as nulls and empty lists', async () => {
    const t = await h.client.tweetInfo(h.fx.author.id === h.fx.reply.by.id ? h.fx.quote.id : h.fx.reply.id);
    const raw = t.raw as Record<string, unknown>;
    expect('retweeted_status' in raw).toBe(true);
    expect(raw.retweeted_status).toBeNull();
    expect(t.retweetedTweetId).toBeNull();
  });

  it('reads an absent optional field like a null one (spec mode)', async () => {
    h.sim.control.setQuirks({ explicitNulls: false });
    try {
      const t = await h.client.tweetInfo(h.fx.reply.id);
      expect('retweeted_status' in (t.raw as Record<string, unknown>)).toBe(false);
      expect(t.retweetedTweetId).toBeNull();
      expect(t.inReplyToTweetId).toBe(h.fx.reply.parentId);
    } finally {
      h.sim.control.setQuirks({ explicitNulls: true });
    }
  });

  it('never sends a malformed body the service would answer with an empty page', async () => {
    const before = h.sim.control.requestLog().length;
    await expect(h.client.userTweets({ userId: 'alice' })).rejects.toBeInstanceOf(InputError);
    await expect(h.client.communityMembers({ communityLink: '' })).rejects.toBeInstanceOf(InputError);
    expect(h.sim.control.requestLog().length).toBe(before);
  });

  it('answers 404 for a suspended account from the catalog', async () => {
    const suspended = catalog(h.sim.world).users.suspended[0];
    expect(suspended).toBeDefined();
    await expect(h.client.info({ username: suspended! })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('ends an int64-cursor listing at next_cursor "0" (string or number) without asking for it', async () => {
    const list = h.sim.world.lists.filter((l) => l.members.length > 20).sort((a, b) => a.members.length - b.members.length)[0]!;
    const w = h.sim.world;
    const user = [...w.users].filter((u) => !u.protected && !u.suspended && !u.deleted).sort((a, b) => w.followersOf(b.index).length - w.followersOf(a.index).length)[0]!;
    for (const integerCursors of [false, true]) {
      h.sim.control.setQuirks({ zeroEndCursors: true, integerCursors });
      try {
        const before = h.sim.control.requestLog().length;
        const members = await walk((cursor) => h.client.listMembers({ listId: list.id, ...(cursor ? { cursor } : {}) }));
        const followers = await walk((cursor) => h.client.followers({ userId: user.id, ...(cursor ? { cursor } : {}) }));
        expect(members.ended && followers.ended).toBe(true);
        expect(members.items.length).toBeGreaterThan(20);
        const sent = h.sim.control.requestLog().slice(before);
        // One answered request a page (the static gate does not pace: the service may 429 one):
        // none for a page after "0".
        expect(sent.filter((r) => r.status !== 429)).toHaveLength(members.pages + followers.pages);
      } finally {
        h.sim.control.setQuirks({ zeroEndCursors: false, integerCursors: false });
      }
    }
  });

  it('keeps walking across empty pages that carry a cursor', async () => {
    h.sim.control.setFaults({ emptyPageRate: 0.3 });
    try {
      const result = await walk((cursor) => h.client.userTweets({ userId: h.fx.author.id, ...(cursor ? { cursor } : {}) }), 200);
      expect(result.ended).toBe(true);
      expect(new Set(result.items.map((t) => t.id)).size).toBe(h.fx.authorTweetIds.length);
    } finally {
      h.sim.control.setFaults({ emptyPageRate: 0 });
    }
  });
});
