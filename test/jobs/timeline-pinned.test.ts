/**
 * A timeline's pinned tweet at the head of its first page (the simulator's pinnedHead quirk) is
 * stored but says nothing of how far a walk has read. Counted in the walk's id range, it became
 * the pass's oldest id: a pass that resumed a cut one re-read stored pages on its way to the gap,
 * none could lower that oldest id, so each counted stale and the pass ended `stale-pages` short
 * of the gap, pass after pass, with the tweets in it never stored.
 */
import { describe, expect, it } from 'vitest';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { getWatchRow } from '../../src/store/watches.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';

describe('a timeline watch whose first page starts with an old pinned tweet', () => {
  const h = useHarness();

  it('a pass cut after a dozen pages is finished by the next, and the watch catches up', { timeout: 90_000 }, async () => {
    const w = h.sim.world;
    h.sim.control.setQuirks({ pinnedHead: true });
    // A user whose pinned tweet is older than their newest page.
    const user = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted && u.pinnedTweetIds.length > 0)
      .filter((u) => {
        const own = w.tweetsByAuthor(u.index);
        return own.length > 30 && !own.slice(-20).some((i) => w.tweets.idString(i) === u.pinnedTweetIds[0]);
      })[0]!;
    const tick = (jobId: string) => runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    const jobId = await h.submit({ kind: 'user', params: { target: { username: user.username }, everySeconds: 3600 } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    // 300 new tweets (15 pages); pass 2 is cut after 12 pages (the service repeats a cursor).
    const added = h.sim.control.addTweets(Array.from({ length: 300 }, (_, i) => ({ authorHandle: user.username, text: `burst ${i}` })));
    h.sim.control.setFaults({ repeatCursorAfterPages: 12 });
    await tick(jobId);
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    h.sim.control.setFaults({ repeatCursorAfterPages: null });
    expect((await getWatchRow(h.services.pool, jobId))!.gaps.length).toBeGreaterThan(0);
    // Pass 3 reads past what pass 2 stored into its gap and ends it.
    await tick(jobId);
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const watch = (await getWatchRow(h.services.pool, jobId))!;
    expect(watch.gaps).toEqual([]);
    expect(watch.highWatermarkId).toBe(added.at(-1));
    const stored = new Set(await jobTweetIds(h, jobId));
    expect(added.filter((id) => !stored.has(id))).toEqual([]);
    expect(stored.has(user.pinnedTweetIds[0]!)).toBe(true);
    h.sim.control.setQuirks({ pinnedHead: false });
  });
});
