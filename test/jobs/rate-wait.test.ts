/**
 * The rate-wait stamps (harvest status: "waiting for rate") cost Redis writes: a job whose slices
 * all wait at once is stamped at most once a second by a process, not once per waiting slice.
 */
import { describe, expect, it } from 'vitest';
import type { RequestGate } from '../../src/api-client/gate.ts';
import { RateWaitTracker } from '../../src/jobs/rate-wait.ts';
import type { RedisConnection } from '../../src/jobs/redis-keys.ts';

/** A Redis double that records ZADDs (the tracker's only write). */
function recordingRedis(): { redis: RedisConnection; stamps: Array<{ jobId: string; at: number }> } {
  const stamps: Array<{ jobId: string; at: number }> = [];
  const redis = {
    zadd: async (_key: string, score: number, member: string) => {
      stamps.push({ jobId: member, at: score });
      return 1;
    },
  } as unknown as RedisConnection;
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
});
