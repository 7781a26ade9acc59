/**
 * A worker stopped mid-run (SIGTERM, as systemd or Ctrl-C) writes no warnings: the slices it was
 * walking go back to the queue as a matter of course (it logged a warning with an AbortedError
 * stack for each of them) and put back to pending, and the next worker finishes the job with the
 * exact set.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { jobHealth } from '../../src/store/job-status.ts';
import { busyWorldOptions, jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { isEnd, startWorker, stopWorker, waitForJob, type WorkerProcess } from './support.ts';

describe('a worker stopped mid-run', () => {
  const h = useHarness(busyWorldOptions);
  const workers: WorkerProcess[] = [];
  afterAll(() => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
  });

  it('logs no warning for the slices it hands back, and the next worker finishes the job', { timeout: 58_000 }, async () => {
    const query = 'lang:en since:2026-09-10 until:2026-09-14';
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-14' } });
    const first = startWorker({ ...h.env, HARVEST_LOG_LEVEL: 'warn' }, 4);
    workers.push(first);
    const s = await waitForJob(h.services.pool, jobId, (x) => isEnd(x) || x.pages >= 6, 30_000);
    expect(s.status, 'the job ended before the stop: the run is too short').not.toBe('completed');
    expect(await stopWorker(first)).toBe(0);
    expect(first.output()).not.toMatch(/back to the queue|AbortedError|"level":(40|50)/);
    // Its walks put their slices back (cursor and lease kept): none reads running with nobody
    // walking it, so the job waits on "no worker seen", not "slices running but no page".
    const { rows } = await h.services.pool.query<{ status: string; n: number; leased: number }>(
      `SELECT status, count(*)::int AS n, count(lease)::int AS leased FROM job_slices WHERE job_id = $1::bigint GROUP BY status`,
      [jobId],
    );
    expect(rows.find((r) => r.status === 'running')).toBeUndefined();
    expect(rows.find((r) => r.status === 'pending')?.leased).toBeGreaterThan(0);
    expect((await jobHealth(h.services.pool, { stalledAfterMs: 0, jobId }))[0]?.waitsOn).toMatch(/^no worker seen/);

    workers.push(startWorker(h.env, 4));
    const done = await waitForJob(h.services.pool, jobId, isEnd, 40_000);
    expect(done.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expectedSearchIds(h.sim.world, query));
  });
});
