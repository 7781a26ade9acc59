/**
 * A worker asked to stop while Redis is down: BullMQ's close waits for Redis forever, so the stop
 * gives it a grace period and then stops without it (the pages it committed are in Postgres).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { startHarness, type Harness } from '../helpers/harness.ts';
import { exited, ownRedis, sleep, startWorker, terminate, type OwnRedis, type WorkerProcess } from './support.ts';

describe('stopping with Redis down', () => {
  let h: Harness;
  let redis: OwnRedis;
  let worker: WorkerProcess | null = null;
  beforeAll(async () => {
    redis = await ownRedis();
    h = await startHarness({ env: { REDIS_URL: redis.url, HARVEST_LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    if (worker && worker.proc.exitCode === null) worker.proc.kill('SIGKILL');
    // The harness cleans its queues in Redis: give it one again.
    await redis?.start();
    await h?.close();
    await redis?.kill();
  });

  it('SIGTERM ends the process about 10 s after Redis went away, with exit 1 and one line saying why', { timeout: 45_000 }, async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-16' } });
    worker = startWorker(h.env, 2);
    for (let i = 0; i < 200 && ((await jobSnapshot(h.services.pool, jobId))?.pages ?? 0) < 3; i++) await sleep(50);
    expect((await jobSnapshot(h.services.pool, jobId))!.pages).toBeGreaterThanOrEqual(3);
    await redis.kill();
    await sleep(500);
    const stopped = await terminate(worker);
    expect(stopped.code).toBe(1);
    expect(stopped.ms).toBeLessThan(20_000);
    expect(worker.output()).toContain('Redis is unreachable: stopping without it');
  });

  it('requests still out when Redis goes are seen through and their pages committed before the worker exits', { timeout: 60_000 }, async () => {
    await redis.kill();
    await redis.start();
    const logFrom = h.sim.control.requestLog().length;
    const since = new Date();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-16', until: '2026-09-22' } });
    worker = startWorker(h.env, 4);
    for (let i = 0; i < 200 && ((await jobSnapshot(h.services.pool, jobId))?.pages ?? 0) < 3; i++) await sleep(50);
    // From now on every answer takes 13 s: longer than the 10 s the stop gives Redis.
    h.sim.control.setFaults({ slowRate: 1, slowMs: 13_000 });
    await sleep(600);
    await redis.kill();
    worker.proc.kill('SIGTERM');
    const code = await Promise.race([exited(worker.proc), sleep(45_000).then(() => 'still running' as const)]);
    h.sim.control.setFaults({ slowRate: 0 });
    expect(code).toBe(1);
    expect(worker.output()).toContain('every page sent is committed in Postgres');
    // Requests were out when the stop found Redis gone (else this test would prove nothing).
    const line = worker.output().split('\n').find((l) => l.includes('Redis is unreachable: stopping without it'))!;
    expect((JSON.parse(line) as { inFlightAtGone: number }).inFlightAtGone).toBeGreaterThan(0);
    // Every search request the service answered (the job's, and the planner's probes) is on record
    // in Postgres as answered: none cut (status 0) by the exit.
    const answered = h.sim.control.requestLog().slice(logFrom).filter((r) => r.path === '/v3/search-tweets' && r.status === 200).length;
    const { rows } = await h.services.pool.query<{ ok: number; cut: number }>(
      `SELECT count(*) FILTER (WHERE status = 200)::int AS ok, count(*) FILTER (WHERE status = 0)::int AS cut
         FROM api_requests WHERE endpoint LIKE '%search-tweets' AND at >= $1`,
      [since],
    );
    expect(rows[0]).toEqual({ ok: answered, cut: 0 });
  });
});
