/**
 * Keyword and timeline watches: each pass fetches only what is newer than the watermark, an idle
 * pass is one request, and a pinned tweet at the head of a timeline neither ends a pass early nor
 * counts as caught up.
 */
import { describe, expect, it } from 'vitest';
import type { CanonicalTweet } from '../../src/api-client/canonical.ts';
import type { FetchedPage } from '../../src/jobs/kind.ts';
import { timelineVerdict } from '../../src/jobs/kinds/user.ts';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { runCli } from '../helpers/cli.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { getWatchRow } from '../../src/store/watches.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('keyword and timeline watches', () => {
  const h = useHarness();
  const calls = (path: string) => h.sim.control.requestLog().filter((r) => r.path === path).length;
  const tick = (jobId: string) => runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
  const author = () => h.sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted)!;

  it('search --every: new matches only, newest first down to the watermark; an idle pass is one request', async () => {
    const word = 'quokkawatch';
    const jobId = await h.submit({ kind: 'search', params: { query: word, everySeconds: 600 } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    expect(await jobTweetIds(h, jobId)).toEqual([]);

    const added = h.sim.control.addTweets(Array.from({ length: 25 }, (_, i) => ({ authorHandle: author().username, text: `a ${word} ${i}` })));
    let before = calls('/v3/search-tweets');
    await tick(jobId);
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    expect(calls('/v3/search-tweets') - before).toBe(2); // 25 = 20 + 5, the service ends the walk
    expect(await jobTweetIds(h, jobId)).toEqual([...added].sort());
    expect((await getWatchRow(h.services.pool, jobId))!.highWatermarkId).toBe(added.at(-1));

    before = calls('/v3/search-tweets');
    await tick(jobId);
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(calls('/v3/search-tweets') - before).toBe(1);

    const more = h.sim.control.addTweets([{ authorHandle: author().username, text: `late ${word}` }]);
    await tick(jobId);
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(await jobTweetIds(h, jobId)).toEqual([...added, ...more].sort());
    expect(expectedSearchIds(h.sim.world, word)).toEqual([...added, ...more].sort());
  });

  it('search --every refuses --until and --order popular before any request', async () => {
    await expect(h.submit({ kind: 'search', params: { query: 'x', everySeconds: 600, until: '2026-10-01' } })).rejects.toThrow(/--until/);
    await expect(h.submit({ kind: 'search', params: { query: 'x', everySeconds: 600, order: 'popular' } })).rejects.toThrow(/popular/);
    const before = (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
    for (const argv of [
      ['search', 'x', '--every', '10m', '--until', '2026-10-01'],
      ['search', 'x', '--every', '10m', '--order', 'popular'],
      ['user', 'someone', '--every', '10s'],
      ['audit', 'abc'],
    ]) {
      const r = await runCli(argv, h.env);
      expect(r.code, argv.join(' ')).not.toBe(0);
      expect(r.err.split('\n')).toHaveLength(1);
    }
    expect((await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n).toBe(before);
  });

  it('user --every: the first pass reads the timeline, later passes only the new tweets', async () => {
    const w = h.sim.world;
    const user = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .sort((a, b) => w.tweetsByAuthor(b.index).length - w.tweetsByAuthor(a.index).length)[5]!;
    const jobId = await h.submit({ kind: 'user', params: { target: { username: user.username }, everySeconds: 3600 } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const first = await jobTweetIds(h, jobId);
    expect(first.length).toBeGreaterThan(20);

    let before = calls('/v3/user-tweets');
    await tick(jobId);
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(calls('/v3/user-tweets') - before).toBe(1);

    const added = h.sim.control.addTweets(Array.from({ length: 3 }, (_, i) => ({ authorHandle: user.username, text: `news ${i}` })));
    before = calls('/v3/user-tweets');
    await tick(jobId);
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(calls('/v3/user-tweets') - before).toBe(1);
    expect(await jobTweetIds(h, jobId)).toEqual([...first, ...added].sort());
    expect((await getWatchRow(h.services.pool, jobId))!.highWatermarkId).toBe(added.at(-1));
  });
});

describe('timeline pass verdict', () => {
  const page = (ids: string[]): FetchedPage => ({
    endpoint: 'POST /v3/user-tweets',
    tweets: ids.map((id) => ({ id }) as CanonicalTweet),
    users: [],
    nextCursor: 'c',
    quarantined: [],
    itemCount: ids.length,
  });
  const p = { target: { username: 'x' }, watermarkId: '500', pass: 2 };

  it('a pinned tweet older than the watermark at the head of the first page does not end the pass', () => {
    expect(timelineVerdict(p, page(['100', '900', '800']), { firstPage: true }).stop).toBeUndefined();
    expect(timelineVerdict(p, page(['100', '900', '400']), { firstPage: true }).stop).toMatch(/caught up/);
    // not at the head of the first page: an old tweet is the watermark reached
    expect(timelineVerdict(p, page(['100', '900']), { firstPage: false }).stop).toMatch(/caught up/);
    expect(timelineVerdict({ ...p, watermarkId: null }, page(['100']), { firstPage: true }).stop).toBeUndefined();
  });
});
