/**
 * The workers' Redis connection (maxRetriesPerRequest: null) holds a command until Redis is back.
 * A dashboard tick that awaited one never ended: every open page kept showing old figures under
 * "live", and Ctrl-C waited for it. A tick now gives Redis a few seconds and reports the failure.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerMetricSources } from '../../src/cli/commands/operate.ts';
import { loadJobDetail, loadOverview } from '../../src/dashboard/source.ts';
import { HarvestMetrics } from '../../src/jobs/metrics.ts';
import type { Services } from '../../src/jobs/services.ts';
import { createJob } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { closedPort } from '../helpers/net.ts';

let db: TestDatabase;
let redis: Redis;

beforeAll(async () => {
  db = await createTestDatabase();
  // As services.redis is made (src/jobs/queue.ts), pointed where no Redis answers.
  redis = new Redis(`redis://127.0.0.1:${await closedPort()}`, { maxRetriesPerRequest: null, lazyConnect: false });
  redis.on('error', () => undefined);
});
afterAll(async () => {
  redis?.disconnect();
  await db?.drop();
});

describe('the dashboard while Redis is down', () => {
  it('a tick fails within seconds instead of waiting for Redis forever', { timeout: 30_000 }, async () => {
    let asked = 0;
    const deps = {
      pool: db.pool,
      keyStates: async () => (asked++, await redis.hgetall('nothing'), []),
      rateWaits: { waitingJobs: () => redis.zrange('nothing', 0, -1) },
      config: { stalledAfterMs: 60_000 },
    };
    const started = Date.now();
    await expect(loadOverview(deps, 1)).rejects.toThrow(/Redis did not answer the key states within 3000 ms/);
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
    await expect(loadJobDetail(deps, jobId)).rejects.toThrow(/Redis did not answer the rate waits/);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The next tick waits for the read still out instead of queueing another one.
    await expect(loadOverview(deps, 1)).rejects.toThrow(/Redis did not answer/);
    expect(asked).toBe(1);
  });

  it("a worker's /metrics answers within seconds with every series but the Redis-fed gauges", { timeout: 30_000 }, async () => {
    const metrics = new HarvestMetrics();
    metrics.bindCollectors(
      workerMetricSources({
        pool: db.pool,
        config: { stalledAfterMs: 60_000 } as Services['config'],
        gate: { keyStates: async () => (await redis.hgetall('nothing'), []) },
        rateWaits: { waitingJobs: () => redis.zrange('nothing', 0, -1) },
      }),
    );
    const started = Date.now();
    const text = await metrics.metricsText();
    expect(Date.now() - started).toBeLessThan(10_000);
    // The Postgres-fed gauges are there, the failures are counted.
    expect(text).toMatch(/^harvest_jobs\{/m);
    expect(text).toMatch(/^harvest_metrics_source_errors_total\{source="keys"\} 1/m);
    expect(text).toMatch(/^harvest_metrics_source_errors_total\{source="stalled"\} 1/m);
  });
});
