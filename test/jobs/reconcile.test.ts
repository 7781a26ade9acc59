/**
 * Reconcile puts back what Postgres says is runnable and nothing in Redis holds (issue 11, item 2):
 * a slice with no BullMQ job is queued again, one that is waiting is left alone, and a running
 * worker's periodic reconcile finds slices whose queue entries vanished under it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LATENCY_MS, Harvester } from '../../src/jobs/harvester.ts';
import { submitJob } from '../../src/jobs/submit.ts';
import { createWorld } from '../../src/simulator/world/index.ts';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { jobTweetIds, startHarness, type Harness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('reconcile', () => {
  let h: Harness;
  beforeAll(async () => {
    const world = createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } });
    h = await startHarness({ simulator: { world, latencyMs: [20, 60] } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('queues only the runnable slices that no BullMQ job holds, and writes the epoch', async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-12' } });
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    const { rows } = await h.services.pool.query<{ id: string }>(
      `SELECT id::text FROM job_slices WHERE job_id = $1::bigint AND status = 'pending' ORDER BY id`,
      [jobId],
    );
    expect(rows.length).toBeGreaterThan(1);
    // Submitted slices are waiting in the queue: nothing to do.
    const first = await reconcile(deps, jobId);
    expect(first).toMatchObject({ slices: rows.length, requeued: 0 });
    // One entry vanishes (a flush, a lost race): only that one is queued again.
    await h.services.queues.removeSlice('backfill', rows[0]!.id);
    expect((await h.services.queues.counts()).backfill.waiting).toBe(rows.length - 1);
    const second = await reconcile(deps);
    expect(second.requeued).toBe(1);
    expect((await h.services.queues.counts()).backfill.waiting).toBe(rows.length);
    expect(await h.services.gate.isReconciled()).toBe(true);
    await h.services.queues.obliterate();
  });

  it('a watch submitted with its first pass queued: its scheduler first ticks an interval later (the second pass), not at once', async () => {
    await h.services.queues.obliterate();
    const w = h.sim.world;
    const target = [...w.users].filter((u) => !u.protected && !u.suspended && !u.deleted).sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[2]!;
    await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600 } });
    // The watch queue: the first pass's slice ready, the scheduler's tick an hour away.
    const { watch } = await h.services.queues.counts();
    expect((watch.waiting ?? 0) + (watch.prioritized ?? 0)).toBe(1);
    expect(watch.delayed).toBe(1);
    await h.services.queues.obliterate();
  });

  it("a watch's scheduler put back after Redis lost it ticks when the next pass is due, not at once", async () => {
    const w = h.sim.world;
    const target = [...w.users].filter((u) => !u.protected && !u.suspended && !u.deleted).sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[0]!;
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600 } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    const queues = h.services.queues;
    await queues.obliterate();
    expect(await queues.hasWatchSchedule(jobId)).toBe(false);
    expect(await reconcile(deps, jobId)).toMatchObject({ watches: 1, rescheduled: 1 });
    expect(await queues.hasWatchSchedule(jobId)).toBe(true);
    // Its tick waits for the hour (delayed), none is ready to start a pass now.
    const { watch } = await queues.counts();
    expect([watch.waiting, watch.prioritized, watch.delayed]).toEqual([0, 0, 1]);
    await queues.obliterate();
  });

  it('a job whose walks a commit ended, with the roll-up lost to a crash and its queue entries to Redis, is ended by reconcile; so is a watch pass', async () => {
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    const pool = h.services.pool;
    // The state a worker killed right after its last page's commit leaves: every slice done (the
    // commit marks it, atomically with the page), the job still running, and no queue entry.
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-20', until: '2026-09-21' } });
    await pool.query(`UPDATE jobs SET status = 'running', started_at = now() WHERE id = $1::bigint`, [jobId]);
    await pool.query(`UPDATE job_slices SET status = 'done', end_reason = 'end', finished_at = now() WHERE job_id = $1::bigint`, [jobId]);
    await h.services.queues.obliterate();
    expect(await reconcile(deps, jobId)).toMatchObject({ requeued: 0, rolledUp: 1 });
    expect((await jobSnapshot(pool, jobId))?.status).toBe('completed');

    // A watch pass the same way: its slice done by its last commit, the pass not on the watch.
    const w = h.sim.world;
    const target = [...w.users].filter((u) => !u.protected && !u.suspended && !u.deleted).sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[1]!;
    const watchId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600 } });
    const passes = async () => (await pool.query<{ n: number }>('SELECT passes AS n FROM watches WHERE job_id = $1::bigint', [watchId])).rows[0]!.n;
    expect(await passes()).toBe(0);
    await pool.query(`UPDATE jobs SET status = 'running', started_at = now() WHERE id = $1::bigint`, [watchId]);
    await pool.query(`UPDATE job_slices SET status = 'done', end_reason = 'end', finished_at = now() WHERE job_id = $1::bigint`, [watchId]);
    await h.services.queues.obliterate();
    expect(await reconcile(deps, watchId)).toMatchObject({ rolledUp: 2 });
    expect(await passes()).toBe(1);
    expect((await jobSnapshot(pool, watchId))?.status).toBe('scheduled');
    // Nothing left to end: a second reconcile does nothing.
    expect(await reconcile(deps)).toMatchObject({ rolledUp: 0 });
    await h.services.queues.obliterate();
  });

  it('a running worker re-queues slices whose queue entries vanished while they ran, without a restart', { timeout: 40_000 }, async () => {
    const query = { query: 'lang:en', since: '2026-09-12', until: '2026-09-15' };
    // Planned at the default latency, not the one this file's earlier jobs measured: at 20–60 ms
    // the plan is 2 slices, both walked at once, and none would wait in the queue (warm code,
    // as in a shared fork, measures the low end).
    const { jobId } = await submitJob(
      { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate, planContext: { pooledRate: 20, latencyMs: DEFAULT_LATENCY_MS, now: new Date() } },
      { kind: 'search', params: query },
    );
    // Two slices at a time, so others wait in the queue when it goes.
    const harvester = new Harvester(h.services, { concurrency: 2, quotaSyncMs: 3_600_000, reconcileMs: 500 });
    await harvester.start();
    try {
      for (let i = 0; i < 400 && ((await jobSnapshot(h.services.pool, jobId))?.pages ?? 0) < 3; i++) await sleep(25);
      const { rows } = await h.services.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint AND status = 'pending'`,
        [jobId],
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
      // Every queue entry goes, active ones included; the limiter's epoch stays, so nothing
      // announces a loss: the slices stay pending/running in Postgres with nothing holding them.
      await h.services.queues.obliterate();
      const deadline = Date.now() + 30_000;
      let snap = await jobSnapshot(h.services.pool, jobId);
      while (snap && !['completed', 'failed', 'cancelled'].includes(snap.status) && Date.now() < deadline) {
        await sleep(50);
        snap = await jobSnapshot(h.services.pool, jobId);
      }
      expect(snap?.status).toBe('completed');
    } finally {
      await harvester.stop();
    }
    expect(await jobTweetIds(h, jobId)).toEqual(expectedSearchIds(h.sim.world, `lang:en since:${query.since} until:${query.until}`));
  });
});
