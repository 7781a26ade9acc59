/**
 * Redis lost mid-run: a redis-server owned by this file is killed while a worker process walks a
 * backfill and comes back EMPTY on the same port. Postgres is the record (ARCHITECTURE invariant
 * 3), so the run must still finish with the exact set, and without anyone restarting the worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorld } from '../../src/simulator/world/index.ts';
import { jobTweetIds, startHarness, type Harness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { isEnd, ownRedis, sleep, startWorker, stopWorker, waitForJob, type OwnRedis, type WorkerProcess } from './support.ts';

describe('Redis restarted mid-run', () => {
  let h: Harness;
  let redis: OwnRedis;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    redis = await ownRedis();
    const world = createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } });
    h = await startHarness({ simulator: { world, latencyMs: [40, 160] }, env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
    await h?.close();
    await redis?.kill();
  });

  it('an empty Redis after a restart: the running worker finishes the run, exact set', { timeout: 58_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-10 until:2026-09-16');
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-16' } });
    // Few slices at once, so most of them are still waiting in Redis when it goes.
    const worker = startWorker(h.env, 2);
    workers.push(worker);
    const before = await waitForJob(h.services.pool, jobId, (s) => isEnd(s) || s.pages >= 10, 30_000);
    expect(before.status).not.toBe('completed');
    const { rows } = await h.services.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint AND status = 'pending'`,
      [jobId],
    );
    // Slices that only Redis knew to run next: lost with it unless the worker reconciles.
    expect(rows[0]!.n).toBeGreaterThan(0);

    await redis.kill();
    await sleep(500);
    await redis.start();

    // The worker itself must notice: Redis came back without a single queued slice.
    const byItself = await waitForJob(h.services.pool, jobId, isEnd, 25_000).catch((e: unknown) => e as Error);
    const finishedByItself = !(byItself instanceof Error);
    if (!finishedByItself) {
      // Whatever the worker did, nothing may be lost: a restarted worker reconciles from Postgres.
      expect(await stopWorker(worker)).not.toBeNull();
      workers.push(startWorker(h.env, 4));
      await waitForJob(h.services.pool, jobId, isEnd, 20_000);
    }
    const done = await waitForJob(h.services.pool, jobId, isEnd, 1000);
    expect(done.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    expect(worker.proc.exitCode === null || finishedByItself === false, 'the worker process died with Redis').toBe(true);
    expect(finishedByItself, `the run did not finish after Redis came back empty: ${String(byItself instanceof Error ? byItself.message : '')}`).toBe(true);
    for (const w of workers.splice(0)) await stopWorker(w);
  });
});
