/**
 * One lock order (issue #11, item 8): a page commit locks its slice row and then its job row; pause
 * and cancel (and a slice's end, a job's failure or early end) take the job's live slices in id
 * order and then the job, so none of them can wait on a commit that waits on them. Pause, resume
 * and cancel are sent while sixteen slices commit pages in parallel: no call fails, and Postgres
 * counts no deadlock (SQLSTATE 40P01) in the database, including the ones commitPage would have
 * retried silently.
 */
import { describe, expect, it } from 'vitest';
import { controlJob } from '../../src/jobs/control.ts';
import { Harvester } from '../../src/jobs/harvester.ts';
import { sqlState } from '../../src/store/db.ts';
import { createWorld } from '../../src/simulator/world/index.ts';
import { useHarness } from '../helpers/harness.ts';
import { sleep, waitForJob } from './support.ts';

describe('pause and cancel during heavy commits', () => {
  const h = useHarness(() => ({
    keys: ['lock-key-1', 'lock-key-2', 'lock-key-3', 'lock-key-4'],
    simulator: { world: createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } }), latencyMs: [5, 30] },
  }));

  async function deadlocks(): Promise<number> {
    await h.db.pool.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await h.db.pool.query<{ n: string }>('SELECT deadlocks::text AS n FROM pg_stat_database WHERE datname = $1', [h.db.name]);
    return Number(rows[0]?.n ?? 0);
  }

  it('pause, resume and cancel while 16 slices commit: no 40P01 thrown, none counted', { timeout: 90_000 }, async () => {
    const pool = h.services.pool;
    const before = await deadlocks();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-09-21' } });
    const harvester = new Harvester(h.services, { concurrency: 16, quotaSyncMs: 3_600_000 });
    const deps = { pool, queues: h.services.queues, budgets: h.services.gate };
    const errors: unknown[] = [];
    const control = async (action: 'pause' | 'resume' | 'cancel') => {
      try {
        await controlJob(deps, jobId, action);
      } catch (error) {
        errors.push(error);
      }
    };
    await harvester.start();
    try {
      let pages = (await waitForJob(pool, jobId, (s) => s.pages >= 30, 30_000)).pages;
      for (let round = 0; round < 5; round++) {
        const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint AND status = 'running'`, [jobId]);
        expect(rows[0]!.n, 'slices walking at the pause').toBeGreaterThanOrEqual(4);
        await control('pause');
        await sleep(150);
        await control('resume');
        pages = (await waitForJob(pool, jobId, (s) => s.pages >= pages + 25, 30_000)).pages;
      }
      await control('cancel');
    } finally {
      await harvester.stop();
    }
    // A backend's counters reach pg_stat_database when it idles or exits: end the worker's
    // connections (the harness pool reconnects), then read.
    await h.db.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [h.db.name]);
    await sleep(500);
    expect({ deadlocks: (await deadlocks()) - before, errors: errors.map((e) => sqlState(e) ?? String(e)) }).toEqual({ deadlocks: 0, errors: [] });
    expect((await waitForJob(pool, jobId, (s) => s.status === 'cancelled', 5_000)).status).toBe('cancelled');
  });
});
