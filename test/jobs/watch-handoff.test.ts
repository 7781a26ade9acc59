/**
 * Backfill → watch handoff: `search Q --since D --every` and `mentions H --since D --every`
 * backfill [D, now) in parallel slices and watch from the backfill's upper bound: exactly the
 * matching tweets, across the boundary, with tweets posted while the backfill runs.
 */
import { describe, expect, it } from 'vitest';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('backfill → watch handoff', () => {
  const h = useHarness();
  const searches = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets' || r.path === '/v3/mentions').length;
  const author = () => h.sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted)!;

  /** Runs the job to its first scheduled state, posting `during` once its first request was served. */
  async function runPostingDuring(jobId: string, post: () => string[]): Promise<string[]> {
    const before = searches();
    const running = h.runUntil(jobId, { until: ['scheduled', 'failed'], timeoutMs: 60_000 });
    while (searches() === before) await new Promise((r) => setTimeout(r, 1));
    const posted = post();
    expect((await running).status).toBe('scheduled');
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'], timeoutMs: 60_000 })).status).toBe('scheduled');
    return posted;
  }

  it('search: exactly the matching tweets, none read twice', async () => {
    const word = 'numbathandoff';
    const now = Date.now();
    const old = h.sim.control.addTweets(
      Array.from({ length: 45 }, (_, i) => ({ authorHandle: author().username, text: `${word} old ${i}`, createdAtMs: now - 3_600_000 + i })),
    );
    const jobId = await h.submit({ kind: 'search', params: { query: word, since: '2026-09-01', everySeconds: 600 } });
    const after = h.sim.control.addTweets([{ authorHandle: author().username, text: `${word} after submit` }]);
    const during = await runPostingDuring(jobId, () =>
      h.sim.control.addTweets(Array.from({ length: 3 }, (_, i) => ({ authorHandle: author().username, text: `${word} during ${i}` }))),
    );
    const expected = expectedSearchIds(h.sim.world, word);
    expect(expected).toEqual([...old, ...after, ...during].sort());
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    // No overlap: the backfill's max_id: and the watch's since_id: meet at one id.
    const { rows } = await h.services.pool.query<{ items: string }>('SELECT sum(items)::text AS items FROM job_slices WHERE job_id = $1', [jobId]);
    expect(Number(rows[0]!.items)).toBe(expected.length);
  });

  it('mentions: exactly the mentions since --since, before, across and after the boundary', async () => {
    const w = h.sim.world;
    const target = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[0]!;
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01', everySeconds: 3600 } });
    const { rows: slices } = await h.services.pool.query<{ kind: string }>('SELECT kind FROM job_slices WHERE job_id = $1', [jobId]);
    expect(slices.filter((s) => s.kind === 'search').length).toBeGreaterThan(0); // the backfill's parallel slices
    const after = h.sim.control.addTweets([{ authorHandle: author().username, text: `hi @${target.username}` }]);
    const during = await runPostingDuring(jobId, () =>
      h.sim.control.addTweets(Array.from({ length: 2 }, (_, i) => ({ authorHandle: author().username, text: `yo @${target.username} ${i}` }))),
    );
    const expected = expectedSearchIds(w, `@${target.username} since:2026-09-01`);
    for (const id of [...after, ...during]) expect(expected).toContain(id);
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });
});
