/**
 * A full backfill by a worker process under 10 % 500s and recurring 429 bursts, logging at debug:
 * the exact set arrives, and afterwards the API key is nowhere outside the process: not in its
 * logs, not in Redis (looked at mid-run too, while job data exists), not in any Postgres table.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { createWorld } from '../../src/simulator/world/index.ts';
import { jobTweetIds, REDIS_URL, startHarness, type Harness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { deadWorker, isEnd, startWorker, stopWorker, waitForJob, type WorkerProcess } from './support.ts';

const KEY = 'sk-live-RELIABILITY-9f3c1e7a2b44d0';

/** Every key name and value under the prefix, as text. */
async function redisDump(prefix: string): Promise<string> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const parts: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        parts.push(key);
        const type = await redis.type(key);
        const value =
          type === 'string' ? await redis.get(key)
          : type === 'hash' ? await redis.hgetall(key)
          : type === 'list' ? await redis.lrange(key, 0, -1)
          : type === 'set' ? await redis.smembers(key)
          : type === 'zset' ? await redis.zrange(key, 0, -1, 'WITHSCORES')
          : type === 'stream' ? await redis.xrange(key, '-', '+')
          : null;
        parts.push(JSON.stringify(value));
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return parts.join('\n');
}

describe('faults and the key', () => {
  let h: Harness;
  let worker: WorkerProcess | null = null;
  let jobId = '';
  let midRunRedis = '';
  beforeAll(async () => {
    const world = createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } });
    h = await startHarness({ keys: [KEY], simulator: { world, latencyMs: [20, 80] } });
  });
  afterAll(async () => {
    if (worker?.proc.exitCode === null) worker.proc.kill('SIGKILL');
    await h?.close();
  });

  it('10 % 500s and 429 bursts: the exact set arrives', { timeout: 50_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-10 until:2026-09-13');
    h.sim.control.setFaults({ errorRate500: 0.1, burst429: { everyMs: 1500, durationMs: 150 } });
    jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-13' } });
    const w = startWorker({ ...h.env, HARVEST_LOG_LEVEL: 'debug' }, 8);
    worker = w;
    const giveUp = () => deadWorker(w);
    await waitForJob(h.services.pool, jobId, (s) => isEnd(s) || s.pages >= 5, 30_000, { giveUp });
    midRunRedis = await redisDump(h.prefix);
    const done = await waitForJob(h.services.pool, jobId, isEnd, 40_000, { giveUp });
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    const byStatus = h.sim.control.stats().byStatus;
    // The faults really happened, and were survived.
    expect(byStatus['500'] ?? 0).toBeGreaterThan(0);
    expect((byStatus['429'] ?? 0) + (byStatus['500'] ?? 0)).toBeGreaterThan(3);
    expect(await stopWorker(w)).toBe(0);
  });

  it('the key appears nowhere: worker logs at debug, Redis (mid-run and after), every Postgres table', async () => {
    expect(jobId).not.toBe('');
    const logs = worker!.output();
    // The logs did talk about the key, by fingerprint only.
    expect(logs).toContain(keyFingerprint(KEY));
    expect(logs).toContain('api attempt');
    expect(logs).not.toContain(KEY);

    // Mid-run, Redis held the queued slices' job data: the place a key would most likely leak to.
    expect(midRunRedis).toContain('sliceId');
    expect(midRunRedis).not.toContain(KEY);
    expect(await redisDump(h.prefix)).not.toContain(KEY);

    const { rows: tables } = await h.services.pool.query<{ name: string }>(
      `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
         FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    expect(tables.length).toBeGreaterThan(5);
    const hits: string[] = [];
    let rowsSeen = 0;
    for (const { name } of tables) {
      const { rows } = await h.services.pool.query<{ n: number; hits: number }>(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE strpos(t::text, $1) > 0)::int AS hits FROM ${name} t`,
        [KEY],
      );
      rowsSeen += rows[0]!.n;
      if (rows[0]!.hits > 0) hits.push(`${name}: ${rows[0]!.hits}`);
    }
    expect(rowsSeen).toBeGreaterThan(100);
    expect(hits).toEqual([]);
  });
});
