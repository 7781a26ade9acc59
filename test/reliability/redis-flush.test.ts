/**
 * Redis loses every key on a LIVE connection (FLUSHDB, as after a failover to an empty replica):
 * no reconnect announces it. Measured before the fix: a `--max-requests 150` backfill went on to
 * spend 237 requests, because the limiter granted freely once the budget key was gone. Now the
 * limiter fails closed without the reconcile epoch, the worker drains its own runs and reconciles
 * from Postgres (budgets, slices), and the job finishes within its budget: counted by the
 * simulator itself and by api_requests.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/simulator/index.ts';
import { createWorld } from '../../src/simulator/world/index.ts';
import { startHarness, type Harness } from '../helpers/harness.ts';
import { isEnd, ownRedis, startWorker, stopWorker, waitForJob, type OwnRedis, type WorkerProcess, deadWorker } from './support.ts';

const BUDGET = 150;

describe('Redis flushed on a live connection', () => {
  let h: Harness;
  let redis: OwnRedis;
  let worker: WorkerProcess | null = null;
  beforeAll(async () => {
    redis = await ownRedis();
    const world = createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } });
    h = await startHarness({ simulator: { world, latencyMs: [20, 80] }, env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    if (worker && worker.proc.exitCode === null) worker.proc.kill('SIGKILL');
    await h?.close();
    await redis?.kill();
  });

  async function simSearchRequests(): Promise<number> {
    const res = await fetch(`${h.sim.url}/_sim/requests`);
    const body = (await res.json()) as { requests: RequestLogEntry[] };
    return body.requests.filter((r) => r.path.includes('search-tweets')).length;
  }

  it('a --max-requests 150 backfill spends at most 150 requests and still ends', { timeout: 80_000 }, async () => {
    // About 390 pages of work: the budget, not the work, ends this job.
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-09-20' }, maxRequests: BUDGET });
    const w = startWorker(h.env, 4);
    worker = w;
    const before = await waitForJob(h.services.pool, jobId, (s) => isEnd(s) || s.pages >= 40, 40_000, { giveUp: () => deadWorker(w) });
    expect(before.status).not.toBe('completed');

    const flusher = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await flusher.flushdb()).toBe('OK');
    } finally {
      flusher.disconnect();
    }
    const spentAtFlush = await simSearchRequests();

    const done = await waitForJob(h.services.pool, jobId, isEnd, 50_000, { giveUp: () => deadWorker(w) });
    expect(done.status).toBe('completed');
    expect(done.note ?? '').toMatch(/max-requests/);
    // Pages still in flight when the budget ended the job commit (and record their requests) first.
    expect(await stopWorker(w)).toBe(0);
    worker = null;

    const { rows } = await h.services.pool.query<{ spent: number; recorded: number; pending: number }>(
      `SELECT j.requests_spent::int AS spent,
              (SELECT count(*)::int FROM api_requests r WHERE r.job_id = j.id) AS recorded,
              (SELECT count(*)::int FROM job_slices s WHERE s.job_id = j.id AND s.status IN ('pending', 'running')) AS pending
         FROM jobs j WHERE j.id = $1::bigint`,
      [jobId],
    );
    const sim = await simSearchRequests();
    expect(sim, 'requests the simulator answered for the job').toBeLessThanOrEqual(BUDGET);
    expect(rows[0]!.recorded, 'api_requests of the job').toBeLessThanOrEqual(BUDGET);
    expect(rows[0]!.spent).toBe(rows[0]!.recorded);
    expect(rows[0]!.recorded).toBe(sim);
    // The work went on after the flush (slices re-queued from Postgres) until the budget ended it.
    expect(sim).toBeGreaterThan(spentAtFlush + 20);
    expect(sim).toBeGreaterThanOrEqual(BUDGET - 4);
    expect(rows[0]!.pending).toBe(0);
  });
});
