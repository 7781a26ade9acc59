/**
 * Issue #10's first finding: hydrate posted `{tweets: [...]}` where production's field is
 * `tweet_links`, so every batch came back empty and the ids were recorded as "not returned".
 * Against the production profile (the default), 250 ids are three requests and all 250 tweets.
 */
import { describe, expect, it } from 'vitest';
import type { World } from '../../src/simulator/model.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';

const visible = (w: World, i: number) => {
  const u = w.users[i]!;
  return !u.protected && !u.suspended && !u.deleted;
};
const byId = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

describe('hydrate against the production profile', () => {
  const h = useHarness();

  it('stores all 250 ids in three requests, each posting tweet_links', async () => {
    expect(h.sim.profile).toBe('production');
    const w = h.sim.world;
    const ids: string[] = [];
    for (let i = 0; i < w.tweets.count && ids.length < 250; i += 11) if (visible(w, w.tweets.author(i))) ids.push(w.tweets.idString(i));
    expect(ids).toHaveLength(250);
    const before = h.sim.control.requestLog().length;

    const jobId = await h.submit({ kind: 'hydrate', params: { ids } });
    const snap = await h.runUntil(jobId);

    expect(snap.status).toBe('completed');
    expect(snap.note ?? '').not.toMatch(/not returned/);
    expect(await jobTweetIds(h, jobId)).toEqual([...ids].sort(byId));
    const bulk = h.sim.control.requestLog().slice(before).filter((r) => r.path === '/v3/tweet-info-bulk');
    expect(bulk).toHaveLength(3);
    expect(bulk.every((r) => r.status === 200)).toBe(true);
  });
});
