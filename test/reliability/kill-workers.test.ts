/**
 * kill -9 of a worker five times during one backfill: each time a fresh process takes over what
 * the dead one held (after its lock expires), and the job still ends with exactly the simulator's
 * own answer, no page lost and none counted twice.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { busyWorldOptions, jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { exited, isEnd, startWorker, stopWorker, waitForJob, type WorkerProcess } from './support.ts';

describe('kill -9 of workers during a backfill', () => {
  const h = useHarness(busyWorldOptions);
  const workers: WorkerProcess[] = [];
  // Registered after the harness's own afterAll, so it runs first: workers die before the database goes.
  afterAll(() => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
  });

  it('five SIGKILLs mid-run: the exact tweet set and every slice done', { timeout: 58_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-10 until:2026-09-16');
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-16' } });
    workers.push(startWorker(h.env, 4), startWorker(h.env, 4));

    let kills = 0;
    let pagesAtKill = 0;
    while (kills < 5) {
      const s = await waitForJob(h.services.pool, jobId, (x) => isEnd(x) || x.pages >= pagesAtKill + 8, 30_000);
      // The run must still be going for a kill to prove anything.
      expect(s.status, `the job ended after ${kills} kills; the run is too short`).not.toBe('completed');
      const victim = workers.shift()!;
      victim.proc.kill('SIGKILL');
      await exited(victim.proc);
      expect(victim.proc.signalCode).toBe('SIGKILL');
      kills++;
      pagesAtKill = s.pages;
      workers.push(startWorker(h.env, 4));
    }

    const done = await waitForJob(h.services.pool, jobId, isEnd, 40_000);
    expect(done.status).toBe('completed');
    const ids = await jobTweetIds(h, jobId);
    expect(ids.length).toBe(expected.length);
    expect(ids).toEqual(expected);
    const { rows } = await h.services.pool.query<{ status: string }>(
      'SELECT DISTINCT status FROM job_slices WHERE job_id = $1::bigint',
      [jobId],
    );
    expect(rows.map((r) => r.status)).toEqual(['done']);
    for (const w of workers.splice(0)) expect(await stopWorker(w)).toBe(0);
  });
});
