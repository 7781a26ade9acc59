/**
 * The rate-wait stamps (harvest status: "waiting for rate") cost Redis writes: a job whose slices
 * all wait at once is stamped at most once a second by a process, not once per waiting slice.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RequestGate } from '../../src/api-client/gate.ts';
import { RateWaitTracker } from '../../src/jobs/rate-wait.ts';
import type { RedisConnection } from '../../src/jobs/redis-keys.ts';
import { REDIS_URL } from '../helpers/redis.ts';

/** A Redis double that records the stamps of each sweep's MULTI (its ZADD; the prune and expiry are no-ops). */
function recordingRedis(): { redis: RedisConnection; stamps: Array<{ jobId: string; at: number }> } {
  const stamps: Array<{ jobId: string; at: number }> = [];
  const multi = {
    zadd: (_key: string, ...pairs: Array<number | string>) => {
      for (let i = 0; i < pairs.length; i += 2) stamps.push({ at: Number(pairs[i]), jobId: String(pairs[i + 1]) });
      return multi;
    },
    zremrangebyscore: () => multi,
    pexpire: () => multi,
    exec: async () => [],
  };
  const redis = { multi: () => multi } as unknown as RedisConnection;
  return { redis, stamps };
}

function slowGate(ms: number): RequestGate {
  return {
    acquire: () => new Promise((resolve) => setTimeout(() => resolve({ key: 'k', fingerprint: 'k_x' }), ms)),
    report: async () => undefined,
    giveBack: async () => undefined,
  };
}

describe('rate-wait stamps', () => {
  it('16 slices of one job waiting 1.6 s: the job is stamped at most twice, not once per slice', { timeout: 10_000 }, async () => {
    const { redis, stamps } = recordingRedis();
    const gate = new RateWaitTracker(redis, 'p').wrap(slowGate(1600));
    const started = Date.now();
    await Promise.all(Array.from({ length: 16 }, () => gate.acquire({ jobId: '5' })));
    expect(stamps.length).toBeGreaterThanOrEqual(1);
    expect(stamps.length).toBeLessThanOrEqual(2);
    expect(stamps.every((s) => s.jobId === '5')).toBe(true);
    // The first stamp comes within 500 ms of the wait (a sweep every 250 ms, after 250 ms of waiting).
    expect(stamps[0]!.at - started).toBeGreaterThanOrEqual(250);
    expect(stamps[0]!.at - started).toBeLessThanOrEqual(600);
  });

  it('two jobs waiting together are each stamped; a quick grant and a call with no job stamp nothing', { timeout: 10_000 }, async () => {
    const { redis, stamps } = recordingRedis();
    const tracker = new RateWaitTracker(redis, 'p');
    await Promise.all([tracker.wrap(slowGate(600)).acquire({ jobId: '1' }), tracker.wrap(slowGate(600)).acquire({ jobId: '2' })]);
    expect(new Set(stamps.map((s) => s.jobId))).toEqual(new Set(['1', '2']));
    const before = stamps.length;
    await tracker.wrap(slowGate(10)).acquire({ jobId: '3' });
    await tracker.wrap(slowGate(600)).acquire({});
    expect(stamps.length).toBe(before);
  });

  it('a stamp prunes stamps older than a minute and keeps the key from outliving them (no reader needed)', { timeout: 10_000 }, async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = `test-rate-wait-${randomBytes(6).toString('hex')}`;
    try {
      // A job that waited two minutes ago, on a worker whose status nobody has read since.
      await redis.zadd(`${prefix}:rate-wait`, Date.now() - 120_000, 'old');
      await new RateWaitTracker(redis, prefix).wrap(slowGate(600)).acquire({ jobId: '7' });
      await sleep(50); // the sweep's write is not awaited
      expect(await redis.zrange(`${prefix}:rate-wait`, 0, -1)).toEqual(['7']);
      const ttl = await redis.pttl(`${prefix}:rate-wait`);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await redis.del(`${prefix}:rate-wait`);
      redis.disconnect();
    }
  });
});
