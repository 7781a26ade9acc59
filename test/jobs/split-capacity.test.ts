/**
 * Whole-job utilization (issue 13): a split makes a slice only when a walker can take it at once.
 * A slice no walker takes waits, whole, until a walk ends, and a search's walks end together at the
 * job's last pages: its range became the job's tail (the three-key whole job split to 68 slices on
 * 64 walks, and its last 4–5 s ran at half its rate).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LATENCY_MS, Harvester } from '../../src/jobs/harvester.ts';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { runSlice, type SliceRunnerDeps } from '../../src/jobs/slice-runner.ts';
import { split } from '../../src/jobs/slice-split.ts';
import { submitJob } from '../../src/jobs/submit.ts';
import { firstIdAtMs } from '../../src/jobs/time-slices.ts';
import { Walkers } from '../../src/jobs/walkers.ts';
import { silentLogger } from '../../src/logger.ts';
import { loadSliceForRun } from '../../src/store/job-runtime.ts';
import { useHarness, type Harness } from '../helpers/harness.ts';
import { oneSliceJob, runnerDeps } from '../helpers/slice-runner.ts';

const HOUR = 3_600_000;

/** A process whose walks are always free: every split gets its walker. */
const free = (): (() => void) => () => undefined;

describe('splits and free walkers', () => {
  const h = useHarness();

  /** Walks `sliceId` for `pages` pages (the one fetched ahead commits too); the children it split off. */
  async function walk(sliceId: string, pages: number, overrides: Partial<SliceRunnerDeps>): Promise<string[]> {
    const children: string[] = [];
    const abort = new AbortController();
    let seen = 0;
    await runSlice(
      sliceId,
      runnerDeps(h.services, {
        signal: abort.signal,
        targetParallelism: () => 8,
        onPage: () => {
          if (++seen >= pages) abort.abort();
        },
        ...overrides,
        onSplit: async (jobId, child, priority) => {
          children.push(child);
          await overrides.onSplit?.(jobId, child, priority);
        },
      }),
    );
    return children;
  }

  /** A walker takes the slice: it runs under a lease, as markSliceRunning leaves it. */
  async function take(sliceId: string): Promise<void> {
    await h.services.pool.query(`UPDATE job_slices SET status = 'running', lease = 'test-walker' WHERE id = $1::bigint`, [sliceId]);
  }

  it('no free walker in the process: the walk below its target splits nothing', { timeout: 60_000 }, async () => {
    const { sliceId } = await oneSliceJob(h);
    const asked: string[] = [];
    const children = await walk(sliceId, 4, {
      promiseWalker: (priority) => {
        asked.push(priority);
        return null;
      },
    });
    expect(children).toEqual([]);
    expect(asked.length).toBeGreaterThanOrEqual(3);
    expect(new Set(asked)).toEqual(new Set(['backfill']));
  });

  it('a free walker: the walk splits, and again each time its new slice was taken', { timeout: 60_000 }, async () => {
    const { sliceId } = await oneSliceJob(h);
    const children = await walk(sliceId, 5, { promiseWalker: free, onSplit: (_job, child) => take(child) });
    expect(children.length).toBeGreaterThanOrEqual(2);
  });

  it('a slice split off a moment ago and not taken yet: no further split until a walker takes it', { timeout: 60_000 }, async () => {
    const { jobId, sliceId } = await oneSliceJob(h);
    // Free walkers and a target of 8, but nothing takes the new slice.
    const children = await walk(sliceId, 5, { promiseWalker: free });
    expect(children).toHaveLength(1);
    const { rows } = await h.services.pool.query<{ status: string; lease: string | null }>(
      'SELECT status, lease FROM job_slices WHERE id = $1::bigint',
      [children[0]],
    );
    expect(rows[0]).toEqual({ status: 'pending', lease: null });
    // Once taken, the job's next pages split again.
    await take(children[0]!);
    const more = await walk(sliceId, 3, { promiseWalker: free });
    expect(more).toHaveLength(1);
    expect((await h.services.pool.query('SELECT 1 FROM job_slices WHERE job_id = $1::bigint AND status IN ($2, $3)', [jobId, 'pending', 'running'])).rowCount).toBe(3);
  });

  /**
   * A job of three slices over its newest planned range: `ending` with one minute left, `walking`
   * (taken, one hour of its range walked) and `waiting` (no walker took it yet).
   */
  async function endingBesideWalking(): Promise<{ jobId: string; ending: string; walking: string; waiting: string }> {
    const pool = h.services.pool;
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-15' } });
    await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
    const { rows } = await pool.query<{ id: string }>(`SELECT id::text FROM job_slices WHERE job_id = $1::bigint ORDER BY (params->>'sinceMs')::bigint`, [jobId]);
    const ending = rows[0]!.id;
    await pool.query(`UPDATE job_slices SET status = 'done' WHERE job_id = $1::bigint AND id <> $2::bigint`, [jobId, ending]);
    // Two more slices over the newest planned slice's range: one walking, one no walker took yet.
    const copies = await pool.query<{ id: string; until: string }>(
      `INSERT INTO job_slices (job_id, kind, params, priority)
         SELECT job_id, kind, params, priority FROM job_slices, generate_series(1, 2)
          WHERE id = (SELECT id FROM job_slices WHERE job_id = $1::bigint ORDER BY (params->>'sinceMs')::bigint DESC LIMIT 1)
       RETURNING id::text, params->>'untilMs' AS until`,
      [jobId],
    );
    const [walking, waiting] = [copies.rows[0]!.id, copies.rows[1]!.id];
    const walkingUntil = Number(copies.rows[0]!.until);
    // The ending slice has one minute of range left; the walking one has walked one hour of its range.
    await pool.query(`UPDATE job_slices SET params = params || jsonb_build_object('untilMs', (params->>'sinceMs')::bigint + 60000) WHERE id = $1::bigint`, [ending]);
    await take(walking);
    await pool.query(`UPDATE job_slices SET pages = 1, newest_tweet_id = $2::bigint, oldest_tweet_id = $3::bigint WHERE id = $1::bigint`, [
      walking,
      firstIdAtMs(walkingUntil - 60_000).toString(),
      firstIdAtMs(walkingUntil - HOUR).toString(),
    ]);
    return { jobId, ending, walking, waiting };
  }

  /** Puts `sliceId` back to walk its minute again. */
  async function again(sliceId: string): Promise<void> {
    await h.services.pool.query(
      `UPDATE job_slices SET status = 'pending', cursor = NULL, lease = NULL, params = params || jsonb_build_object('untilMs', (params->>'sinceMs')::bigint + 60000) WHERE id = $1::bigint`,
      [sliceId],
    );
  }

  it('a slice that ends while another of its job waits for a walker: no remainder is split (the freed walker takes the waiting one)', { timeout: 30_000 }, async () => {
    const { ending, waiting } = await endingBesideWalking();
    const split: string[] = [];
    const deps = runnerDeps(h.services, { targetParallelism: () => 8, onSplit: async (_job, child) => void split.push(child) });
    expect(await runSlice(ending, deps)).toEqual({ kind: 'done' });
    expect(split).toEqual([]);
    // With no slice waiting, the same end splits the walking slice's remainder.
    await take(waiting);
    await again(ending);
    expect(await runSlice(ending, deps)).toEqual({ kind: 'done' });
    expect(split).toHaveLength(1);
  });

  it('a slice of the job waiting on the other queue (a watch pass) holds back no backfill split or refill', { timeout: 60_000 }, async () => {
    // A search watch with --since: its pass waits on the watch queue while its backfill walks.
    // Backfill walkers cannot take it, so it must not stop them from splitting.
    const { ending, waiting } = await endingBesideWalking();
    await h.services.pool.query(`UPDATE job_slices SET priority = 'watch' WHERE id = $1::bigint`, [waiting]);
    const refilled: string[] = [];
    const deps = runnerDeps(h.services, { targetParallelism: () => 8, onSplit: async (_job, child) => void refilled.push(child) });
    expect(await runSlice(ending, deps)).toEqual({ kind: 'done' });
    expect(refilled).toHaveLength(1);

    const { jobId, sliceId } = await oneSliceJob(h);
    await h.services.pool.query(
      `INSERT INTO job_slices (job_id, kind, params, priority) SELECT job_id, kind, params, 'watch' FROM job_slices WHERE id = $1::bigint`,
      [sliceId],
    );
    const children = await walk(sliceId, 4, { promiseWalker: free, onSplit: (_job, child) => take(child) });
    expect(children.length).toBeGreaterThanOrEqual(1);
    // A backfill slice waiting still holds them back (the test above): only the queue differs.
    expect((await h.services.pool.query(`SELECT 1 FROM job_slices WHERE job_id = $1::bigint AND priority = 'watch' AND status = 'pending'`, [jobId])).rowCount).toBe(1);
  });

  it('a slice that ends beside a waiting slice refills from a remainder on the other queue', { timeout: 30_000 }, async () => {
    // The largest remainder is on the backfill queue, where a slice waits for a walker; a smaller
    // one walks on the watch queue, and is split instead of nothing.
    const { ending, walking: backfill } = await endingBesideWalking();
    const pool = h.services.pool;
    const { rows: copy } = await pool.query<{ id: string; since: string; until: string }>(
      `INSERT INTO job_slices (job_id, kind, params, priority, status, lease, pages)
         SELECT job_id, kind, params, 'watch', 'running', 'test-walker', 1 FROM job_slices WHERE id = $1::bigint
       RETURNING id::text, params->>'sinceMs' AS since, params->>'untilMs' AS until`,
      [backfill],
    );
    const walking = copy[0]!.id;
    const [since, until] = [Number(copy[0]!.since), Number(copy[0]!.until)];
    // It walked a quarter of its range in one page: about three pages left (the backfill one, ~40).
    await pool.query(`UPDATE job_slices SET newest_tweet_id = $2::bigint, oldest_tweet_id = $3::bigint WHERE id = $1::bigint`, [
      walking,
      firstIdAtMs(until - 60_000).toString(),
      firstIdAtMs(until - (until - since) / 4).toString(),
    ]);
    const refilled: Array<{ child: string; priority: string }> = [];
    const deps = runnerDeps(h.services, { targetParallelism: () => 8, onSplit: async (_job, child, priority) => void refilled.push({ child, priority }) });
    expect(await runSlice(ending, deps)).toEqual({ kind: 'done' });
    expect(refilled).toEqual([{ child: expect.any(String), priority: 'watch' }]);
    const { rows } = await h.services.pool.query<{ parent: string }>('SELECT parent_id::text AS parent FROM job_slices WHERE id = $1::bigint', [refilled[0]!.child]);
    expect(rows[0]!.parent).toBe(walking);
  });

  it('a slice that ends splits a remainder for its own walk even in a full worker; one of another queue only for a free walk there', { timeout: 30_000 }, async () => {
    const { ending, waiting } = await endingBesideWalking();
    await take(waiting);
    const split: string[] = [];
    // Every walk of the worker runs (the ending one among them).
    const walkers = new Walkers({ backfill: 3, watch: 1 });
    for (let i = 0; i < 3; i++) walkers.started('backfill');
    const deps = runnerDeps(h.services, {
      targetParallelism: () => 8,
      promiseWalker: (priority, options) => walkers.promise(priority, options),
      onSplit: async (_job, child) => void split.push(child),
    });
    expect(await runSlice(ending, deps)).toEqual({ kind: 'done' });
    expect(split).toHaveLength(1);
    // The ending walk is promised to the new slice: once it ends, its walk is not free.
    walkers.ended('backfill');
    expect(walkers.free('backfill')).toBe(0);
    await take(split[0]!);
    walkers.started('backfill');
    // A watch pass's slice of the job ends (the watch queue's walk frees): the backfill walks are
    // all running, so no backfill slice is split off for it.
    await again(ending);
    await h.services.pool.query(`UPDATE job_slices SET priority = 'watch' WHERE id = $1::bigint`, [ending]);
    walkers.started('watch');
    expect(await runSlice(ending, deps)).toEqual({ kind: 'done' });
    expect(split).toHaveLength(1);
    // With a backfill walk free, it is.
    walkers.ended('backfill');
    await again(ending);
    expect(await runSlice(ending, deps)).toEqual({ kind: 'done' });
    expect(split).toHaveLength(2);
  });

  /**
   * Six walking slices of one job (nothing else pending), each with a split proposal of the older
   * half of its range, all carried out at once with `promiseWalker`: the children made.
   */
  async function splitTogether(promiseWalker: SliceRunnerDeps['promiseWalker']): Promise<string[]> {
    const pool = h.services.pool;
    // Planned at the default latency (16 slices), not the one this file's earlier walks measured.
    const { jobId } = await submitJob(
      { pool, queues: h.services.queues, budgets: h.services.gate, planContext: { pooledRate: 20, latencyMs: DEFAULT_LATENCY_MS, now: new Date() } },
      { kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-15' } },
    );
    const { rows } = await pool.query<{ id: string }>(`SELECT id::text FROM job_slices WHERE job_id = $1::bigint ORDER BY id`, [jobId]);
    expect(rows.length).toBeGreaterThan(6);
    const walking = rows.slice(0, 6).map((r) => r.id);
    await pool.query(`UPDATE job_slices SET status = 'done' WHERE job_id = $1::bigint AND NOT (id = ANY($2::bigint[]))`, [jobId, walking]);
    await pool.query(`UPDATE job_slices SET status = 'running', lease = 'walk-' || id WHERE id = ANY($1::bigint[])`, [walking]);
    const children: string[] = [];
    const deps = runnerDeps(h.services, {
      targetParallelism: () => 64,
      ...(promiseWalker ? { promiseWalker } : {}),
      onSplit: async (_job, child) => void children.push(child),
    });
    const slices = await Promise.all(walking.map(async (id) => (await loadSliceForRun(pool, id))!));
    // As the walks of one group commit's pages go on: in the same turn of the event loop.
    await Promise.all(
      slices.map((slice) => {
        const p = slice.params as { query: string; order?: string; sinceMs: number; untilMs: number };
        const at = Math.floor((p.sinceMs + p.untilMs) / 2);
        return split(slice, { stopBelowMs: at, previousStopBelowMs: null, childParams: { query: p.query, order: p.order, sinceMs: p.sinceMs, untilMs: at } }, deps, silentLogger);
      }),
    );
    return children;
  }

  it('pages of six walks that propose splits at once, with two walkers free: two slices, not six', { timeout: 30_000 }, async () => {
    // The race this closes: with every walker free, each split finds the job with no slice waiting.
    expect((await splitTogether(undefined)).length).toBeGreaterThan(2);
    const walkers = new Walkers({ backfill: 8, watch: 1 });
    for (let i = 0; i < 6; i++) walkers.started('backfill');
    const children = await splitTogether((priority, options) => walkers.promise(priority, options));
    expect(children).toHaveLength(2);
    // Both walks stay promised to the new slices until walks start.
    expect(walkers.free('backfill')).toBe(0);
    walkers.started('backfill');
    walkers.started('backfill');
    expect(walkers.free('backfill')).toBe(0);
    walkers.ended('backfill');
    expect(walkers.free('backfill')).toBe(1);
  });
});

/**
 * Runs a Harvester of `concurrency` walks on the queue for ~1.8 s: the most slices of `jobId`
 * active (pending or running) at once, sampled every 30 ms.
 */
async function mostActiveWhileWalking(h: Harness, jobId: string, concurrency: number): Promise<number> {
  const harvester = new Harvester(h.services, { concurrency, quotaSyncMs: 3_600_000 });
  let most = 0;
  await harvester.start();
  try {
    for (let i = 0; i < 60; i++) {
      await new Promise((r) => setTimeout(r, 30));
      const { rows } = await h.services.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running')`, [jobId]);
      most = Math.max(most, rows[0]!.n);
    }
  } finally {
    await harvester.stop();
  }
  return most;
}

describe('a worker splits its jobs up to its walkers', () => {
  // A harness of its own: no slice another test left queued takes this worker's walkers.
  const h = useHarness();

  it('a worker of one walk splits nothing off its job (a target is at least 2 slices)', { timeout: 60_000 }, async () => {
    const { jobId } = await oneSliceJob(h);
    const most = await mostActiveWhileWalking(h, jobId, 1);
    const { rows } = await h.services.pool.query<{ pages: number; children: number }>(
      `SELECT sum(pages)::int AS pages, count(*) FILTER (WHERE parent_id IS NOT NULL)::int AS children FROM job_slices WHERE job_id = $1::bigint`,
      [jobId],
    );
    // It walked (pages that proposed splits), and never split a slice its one walker could not take.
    expect(rows[0]!.pages).toBeGreaterThanOrEqual(3);
    expect(rows[0]!.children).toBe(0);
    expect(most).toBe(1);
  });
});

describe('a worker with free walks splits its job', () => {
  // A harness of its own: the walks the test above left do not take this worker's walkers.
  const h = useHarness();

  it('a worker of 3 walks splits its one-slice job up to its walks, and not past them', { timeout: 60_000 }, async () => {
    const { jobId } = await oneSliceJob(h);
    const most = await mostActiveWhileWalking(h, jobId, 3);
    const { rows } = await h.services.pool.query<{ children: number }>(`SELECT count(*) FILTER (WHERE parent_id IS NOT NULL)::int AS children FROM job_slices WHERE job_id = $1::bigint`, [jobId]);
    expect(rows[0]!.children).toBeGreaterThanOrEqual(1);
    expect(most).toBeGreaterThanOrEqual(2);
    // Pages of two walks that split at the same moment take the walks they split for: never more
    // slices than walks (a split that counted only running walks could make 4).
    expect(most).toBeLessThanOrEqual(3);
  });
});
