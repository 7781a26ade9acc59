/**
 * Fenced slices (issue #11, item 2): two workers walking one slice. Worker A walks it; its BullMQ
 * lock is lost (the lock key deleted, as when A stalls past HARVEST_LOCK_DURATION_MS), the stalled
 * check puts the slice back and worker B takes it while A is still walking. B's walk takes a new
 * lease, so A's next commit is refused and A stops without touching the queue entry B now holds.
 * A is then shut down mid-run: nothing of it may leave the slice `running` with nothing queued.
 * The periodic reconcile is kept out of the way (1 h), so the run has to finish on its own.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { Harvester } from '../../src/jobs/harvester.ts';
import { QUEUE_NAMES } from '../../src/jobs/queue.ts';
import { jobTweetIds, REDIS_URL, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { sleep, waitForJob } from './support.ts';

describe('two workers on one slice', () => {
  // Slow answers, so a walk of ~27 pages lasts well past the takeover.
  const h = useHarness({ simulator: { latencyMs: [250, 350] } });
  const harvesters: Harvester[] = [];
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  afterAll(async () => {
    for (const x of harvesters) await x.stop();
    connection.disconnect();
  });

  it('a stalled takeover: the newer walk holds the slice, the older one is fenced, the run finishes with the exact set', { timeout: 60_000 }, async () => {
    const pool = h.services.pool;
    const expected = expectedSearchIds(h.sim.world, 'lang:fr');
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:fr' } });
    const { rows } = await pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1::bigint', [jobId]);
    expect(rows).toHaveLength(1);
    const sliceId = rows[0]!.id;
    const pages = { a: 0, b: 0 };
    const worker = (name: 'a' | 'b') => {
      const x = new Harvester(h.services, { concurrency: 1, quotaSyncMs: 3_600_000, reconcileMs: 3_600_000, onPage: () => void pages[name]++ });
      harvesters.push(x);
      return x;
    };
    const a = worker('a');
    await a.start();
    await waitForJob(pool, jobId, (s) => s.pages >= 3, 15_000);
    const b = worker('b');
    await b.start();

    // A loses its lock; the stalled check moves the slice back to wait, and B (A's one slot is
    // busy with the walk it still runs) takes it.
    const queue = new Queue(QUEUE_NAMES.backfill, { connection, prefix: h.prefix });
    try {
      expect(await connection.del(`${h.prefix}:${QUEUE_NAMES.backfill}:s-${sliceId}:lock`)).toBe(1);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const job = await queue.getJob(`s-${sliceId}`);
        if (!job || (job.stalledCounter >= 1 && (await job.isActive()))) break;
        if (Date.now() > deadline) throw new Error('the stalled check never handed the slice to another worker');
        await sleep(50);
      }
    } finally {
      await queue.close();
    }
    const pagesAtTakeover = pages.a;
    // B's first page is in (its fetch takes ~300 ms); A, still walking, may have one in flight.
    await sleep(1500);
    expect(pages.b).toBeGreaterThan(0);
    // A commits nothing more once B holds the lease (at most the page in flight at the takeover).
    expect(pages.a - pagesAtTakeover).toBeLessThanOrEqual(1);

    // A shuts down while B walks: A's run must not strand the slice.
    await a.stop();
    const done = await waitForJob(pool, jobId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status), 30_000);
    expect(done.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });
});
