/**
 * A worker asked to stop while Redis has gone silent: the connection stays open and `ready`, but
 * nothing comes back (a blackholed host, a SIGSTOPped server, a partition). Unlike a Redis that
 * refuses connections (redis-down-stop.test.ts), the client's status never leaves `ready`, so the
 * stop must see Redis gone from a PING that goes unanswered, and then end as it does for a refused
 * one: every page sent committed in Postgres, the slices in hand run again later.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Harvester } from '../../src/jobs/harvester.ts';
import { jobTweetIds, REDIS_URL, startHarness, type Harness } from '../helpers/harness.ts';
import { SilentRedisProxy } from '../helpers/silent-redis-proxy.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { deadWorker, sleep, startWorker, terminate, waitForJob, type WorkerProcess } from './support.ts';

describe('stopping with Redis silent', () => {
  let h: Harness;
  let proxy: SilentRedisProxy;
  let harvester: Harvester | null = null;
  let worker: WorkerProcess | null = null;
  beforeAll(async () => {
    proxy = new SilentRedisProxy(new URL(REDIS_URL));
    await proxy.listen();
    // Its own key: a key's limiter state outlives the prefix, and requests stay out a while.
    h = await startHarness({ ownKey: true, simulator: { latencyMs: [40, 160] }, env: { REDIS_URL: proxy.url, HARVEST_LOG_LEVEL: 'info' } });
  });
  afterEach(() => {
    proxy.restore();
  });
  afterAll(async () => {
    if (worker && worker.proc.exitCode === null) worker.proc.kill('SIGKILL');
    proxy?.restore();
    await h?.close();
    await proxy?.close();
  });

  /** Waits until the job committed `pages` pages (giving up at once when `giveUp` says why). */
  async function untilPages(jobId: string, pages: number, giveUp?: () => string | null): Promise<void> {
    const snap = await waitForJob(h.services.pool, jobId, (s) => s.pages >= pages, 15_000, giveUp ? { giveUp } : {});
    expect(snap.status).not.toBe('completed');
  }

  /** Search requests the service answered since `from` in its log, and how Postgres recorded them since `since`. */
  async function searchRequests(from: number, since: Date): Promise<{ answered: number; ok: number; cut: number }> {
    const answered = h.sim.control.requestLog().slice(from).filter((r) => r.path === '/v3/search-tweets' && r.status === 200).length;
    const { rows } = await h.services.pool.query<{ ok: number; cut: number }>(
      `SELECT count(*) FILTER (WHERE status = 200)::int AS ok, count(*) FILTER (WHERE status = 0)::int AS cut
         FROM api_requests WHERE endpoint LIKE '%search-tweets' AND at >= $1`,
      [since],
    );
    return { answered, ...rows[0]! };
  }

  it('stop() ends within the grace when Redis stops answering mid-job, reports Redis gone, and Postgres holds every page sent', { timeout: 60_000 }, async () => {
    const query = { query: 'lang:en', since: '2026-09-10', until: '2026-09-16' };
    const logFrom = h.sim.control.requestLog().length;
    const since = new Date();
    const jobId = await h.submit({ kind: 'search', params: query });
    harvester = new Harvester(h.services, { concurrency: 4, quotaSyncMs: 3_600_000 });
    await harvester.start();
    await untilPages(jobId, 3);

    proxy.silence();
    const graceMs = 3_000;
    const asked = Date.now();
    const stopped = await Promise.race([harvester.stop({ redisGraceMs: graceMs }), sleep(25_000).then(() => 'still stopping' as const)]);
    const tookMs = Date.now() - asked;
    harvester = null;
    expect(stopped).toEqual({ redisGone: true });
    // The grace, then at most a few seconds for the requests out to be answered and committed.
    expect(tookMs).toBeGreaterThanOrEqual(graceMs);
    expect(tookMs).toBeLessThan(graceMs + 5_000);

    // Every search request the service answered is on record as answered; none cut by the stop.
    const recorded = await searchRequests(logFrom, since);
    expect(recorded.answered).toBeGreaterThan(0);
    expect(recorded).toEqual({ answered: recorded.answered, ok: recorded.answered, cut: 0 });

    // Redis back: a new worker takes up the slices left in hand from Postgres and the job ends
    // with exactly the set (nothing lost or half-written by the stop).
    proxy.restore();
    const done = await h.runUntil(jobId, { timeoutMs: 40_000, harvester: { concurrency: 4 } });
    expect(done.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expectedSearchIds(h.sim.world, `lang:en since:${query.since} until:${query.until}`));
  });

  it('SIGTERM ends a worker process about 10 s after Redis went silent, with exit 1 and one line saying why', { timeout: 45_000 }, async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-16', until: '2026-09-22' } });
    worker = startWorker(h.env, 2);
    const w = worker;
    await untilPages(jobId, 3, () => deadWorker(w));
    proxy.silence();
    const stopped = await terminate(worker);
    expect(stopped.code).toBe(1);
    expect(stopped.ms).toBeLessThan(20_000);
    expect(worker.output()).toContain('Redis is unreachable: stopping without it');
  });
});
