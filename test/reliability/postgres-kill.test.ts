/**
 * Postgres connections killed mid-run (pg_terminate_backend, as an operator or a failover would):
 * the page in flight rolls back with its transaction, the slice is retried, and the run finishes
 * with the exact set.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { busyWorldOptions, jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { deadWorker, isEnd, sleep, startWorker, stopWorker, waitForJob, type WorkerProcess } from './support.ts';

describe('Postgres connections terminated mid-run', () => {
  const h = useHarness(busyWorldOptions);
  const workers: WorkerProcess[] = [];
  // Registered after the harness's own afterAll, so it runs first: workers die before the database goes.
  afterAll(() => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
  });

  /** Terminates every connection to the test database but the one asking; returns how many. */
  async function terminateAll(): Promise<number> {
    const { rows } = await h.db.pool.query<{ n: number }>(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n
         FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [h.db.name],
    );
    return rows[0]?.n ?? 0;
  }

  it('three rounds of pg_terminate_backend: the worker survives, the run finishes, nothing lost', { timeout: 58_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-10 until:2026-09-16');
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-16' } });
    const worker = startWorker({ ...h.env, HARVEST_LOG_LEVEL: 'warn' }, 4);
    const giveUp = () => deadWorker(worker);
    workers.push(worker);
    let pages = 0;
    let terminated = 0;
    for (let round = 0; round < 3; round++) {
      const s = await waitForJob(h.services.pool, jobId, (x) => isEnd(x) || x.pages >= pages + 6, 30_000, { giveUp });
      expect(s.status, `the job ended after ${round} rounds; the run is too short`).not.toBe('completed');
      pages = s.pages;
      terminated += await terminateAll();
      await sleep(200);
    }
    // The worker's pool held connections each time (it would have nothing to lose otherwise).
    expect(terminated).toBeGreaterThanOrEqual(3);

    const done = await waitForJob(h.services.pool, jobId, isEnd, 45_000, { giveUp });
    expect(done.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    expect(await stopWorker(worker)).toBe(0);
  });
});
