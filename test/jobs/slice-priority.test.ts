/**
 * Each slice has its own priority (migration 0012): a watch's pass down to its watermark or a
 * recent floor is watch work, everything else backfill work, whatever the job's kind. Before, a slice ran at its
 * job's priority: a `mentions --since --every` history ran as watch work (ahead of every backfill,
 * in the keys' watch reserve), and a search watch's passes as backfill work (parked with the
 * backfills once the quota was down to the reserve).
 */
import { describe, expect, it } from 'vitest';
import { controlJob } from '../../src/jobs/control.ts';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { slicePriority } from '../../src/store/jobs.ts';
import { getWatchRow } from '../../src/store/watches.ts';
import { jobTweetIds, useHarness, type Harness } from '../helpers/harness.ts';

async function slicesOf(h: Harness, jobId: string): Promise<Array<{ id: string; kind: string; priority: string; pass: number | null; queues: string[] }>> {
  const { rows } = await h.services.pool.query<{ id: string; kind: string; priority: string; pass: number | null }>(
    `SELECT id::text, kind, priority, (params->>'pass')::int AS pass FROM job_slices WHERE job_id = $1::bigint ORDER BY id`,
    [jobId],
  );
  return Promise.all(rows.map(async (r) => ({ ...r, queues: await h.services.queues.queuesHolding(r.id) })));
}

const tick = (h: Harness, jobId: string) => runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });

describe('slicePriority', () => {
  it('is watch for a pass down to a watermark or a recent floor, backfill for anything else', () => {
    const now = Date.parse('2026-11-24T12:00:00Z');
    const daysAgo = (d: number) => now - d * 24 * 3600 * 1000;
    expect(slicePriority({ pass: 2, handle: 'a', watermarkId: '1790000000000000001', floorMs: null }, now)).toBe('watch');
    // First passes: a mention watch's down to its floor, a keyword watch's down to its since.
    expect(slicePriority({ pass: 1, handle: 'a', watermarkId: null, floorMs: daysAgo(7) }, now)).toBe('watch');
    expect(slicePriority({ pass: 1, query: 'x', order: 'latest', sinceMs: daysAgo(7), watermarkId: null }, now)).toBe('watch');
    // First passes that read far back or everything there is: `mentions --since` a year ago, a
    // whole timeline, a whole community feed.
    expect(slicePriority({ pass: 1, handle: 'a', watermarkId: null, floorMs: daysAgo(365) }, now)).toBe('backfill');
    expect(slicePriority({ pass: 1, target: { username: 'a' }, watermarkId: null }, now)).toBe('backfill');
    expect(slicePriority({ pass: 1, communityId: '1', watermarkId: null }, now)).toBe('backfill');
    expect(slicePriority({ query: 'x', sinceMs: 0, untilMs: 1 }, now)).toBe('backfill');
    expect(slicePriority({ ids: ['1', '2'] }, now)).toBe('backfill');
  });
});

describe('a mentions watch with a history', () => {
  const h = useHarness();

  it('queues its history as backfill work and its passes as watch work', { timeout: 60_000 }, async () => {
    const w = h.sim.world;
    const target = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[0]!;
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600, since: '2026-09-01' } });
    const planned = await slicesOf(h, jobId);
    // The history's ranges, and the first pass, which reads on from where the history ends (its
    // watermark is the hand-over point).
    const history = planned.filter((s) => s.pass === null);
    expect(history.length).toBeGreaterThan(0);
    for (const s of history) expect(s, `slice ${s.id}`).toMatchObject({ priority: 'backfill', queues: ['backfill'] });
    expect(planned.filter((s) => s.pass !== null)).toMatchObject([{ kind: 'mentions', pass: 1, priority: 'watch', queues: ['watch'] }]);

    // Reconcile finds each where it belongs; pause takes each off its queue, resume puts it back.
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    expect((await reconcile(deps, jobId)).requeued).toBe(0);
    await controlJob(deps, jobId, 'pause');
    expect((await slicesOf(h, jobId)).map((s) => s.queues)).toEqual(planned.map(() => []));
    // Resumed with slices to walk, the job is queued (not scheduled, as a watch with none is).
    expect(await controlJob(deps, jobId, 'resume')).toBe('queued');
    expect((await slicesOf(h, jobId)).map((s) => s.queues)).toEqual(planned.map((s) => [s.priority]));

    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    expect((await getWatchRow(h.services.pool, jobId))!.highWatermarkId).not.toBeNull();
    await tick(h, jobId);
    const pass = (await slicesOf(h, jobId)).at(-1)!;
    expect(pass).toMatchObject({ kind: 'mentions', pass: 2, priority: 'watch', queues: ['watch'] });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
  });
});

describe('a search watch when the quota is down to the watch reserve', () => {
  // A key of its own: its quota is set below, and a key's limiter state outlives the harness.
  const h = useHarness({ ownKey: true, env: { HARVEST_WATCH_RESERVE: '1000', HARVEST_QUOTA_RECHECK_MS: '60000' } });

  it('walks its passes on the reserve while a backfill waits for quota', { timeout: 60_000 }, async () => {
    const word = 'numbatwatch';
    const author = h.sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted)!;
    const first = h.sim.control.addTweets(Array.from({ length: 3 }, (_, i) => ({ authorHandle: author.username, text: `a ${word} ${i}` })));
    const jobId = await h.submit({ kind: 'search', params: { query: word, everySeconds: 3600 } });
    expect(await slicesOf(h, jobId)).toMatchObject([{ pass: 1, priority: 'watch', queues: ['watch'] }]);
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    expect(await jobTweetIds(h, jobId)).toEqual([...first].sort());

    // 500 left, under the 1,000 the backfills leave to watches.
    const key = h.config.apiKeys[0]!;
    h.sim.control.setQuota(key.key, 500);
    await h.services.gate.setQuota(key.fingerprint, 500);

    const more = h.sim.control.addTweets([{ authorHandle: author.username, text: `late ${word}` }]);
    await tick(h, jobId);
    expect((await slicesOf(h, jobId)).at(-1)).toMatchObject({ pass: 2, priority: 'watch', queues: ['watch'] });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed', 'paused_quota'] })).status).toBe('scheduled');
    expect(await jobTweetIds(h, jobId)).toEqual([...first, ...more].sort());

    const backfill = await h.submit({ kind: 'search', params: { query: word } });
    const parked = await h.runUntil(backfill, { until: ['paused_quota', 'completed', 'failed'] });
    expect(parked.status).toBe('paused_quota');
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_requests WHERE job_id = $1::bigint', [backfill]);
    expect(rows[0]!.n).toBe(0);
  });
});
