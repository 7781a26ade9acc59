/** The local-minus-Redis clock difference a grant's send-by time is computed with (clock-offset.ts). */
import { describe, expect, it } from 'vitest';
import { localNow, type Grant } from '../../src/api-client/gate.ts';
import { ClockOffset } from '../../src/jobs/limiter/clock-offset.ts';
import { createRedisGate } from '../../src/jobs/limiter/redis-gate.ts';
import { apiKeys, useLimiterRedis } from './fixtures/limiter-redis.ts';

describe('ClockOffset', () => {
  it('keeps the greatest reading: a call that waited on its way (or in Redis) does not move it', () => {
    const clock = new ClockOffset();
    clock.observe(1_000, 900);
    clock.observe(1_200, 1_160); // sent at 1,200, ran 60 ms later than the difference says
    expect(clock.ms).toBe(100);
    clock.observe(1_300, 1_195); // a truer reading
    expect(clock.ms).toBe(105);
  });

  it('forgets a reading after one to two 30 s windows, so a moved clock is followed', () => {
    const clock = new ClockOffset();
    clock.observe(0, -150);
    expect(clock.ms).toBe(150);
    // Redis's clock now runs 50 ms less behind: the old, larger reading still rules for a window…
    clock.observe(30_000, 29_900);
    expect(clock.ms).toBe(150);
    // …and is gone once two windows have passed since it was made.
    clock.observe(60_000, 59_900);
    expect(clock.ms).toBe(100);
  });
});

describe('the send-by time of a grant whose answer a stalled process handled late', () => {
  const limiter = useLimiterRedis();
  const [KEY] = apiKeys('clock-stall-key');

  it('is not pushed back by the stall: the grant is already late, so it is given back, not sent', async () => {
    // A fresh gate: no earlier, prompt answer to read the clock from (a worker's first seconds).
    const gate = createRedisGate({ redis: limiter.redis, prefix: limiter.prefix, keyNamespace: limiter.prefix, keys: [KEY!], ratePerKey: 20, watchReserve: 0 });
    await gate.syncQuota(async () => ({ remaining: 1000, validUntil: null }));
    // The acquire script's caller (defined on the connection by the first gate) stalls the process
    // for 200 ms right after the call is written: Redis answers at once, the answer waits.
    const commands = limiter.redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const original = commands.harvestLimiterAcquire!;
    commands.harvestLimiterAcquire = function stalled(this: unknown, ...args: unknown[]) {
      const answer = original.apply(this, args);
      const until = localNow() + 200;
      while (localNow() < until) {
        // busy: nothing else runs
      }
      return answer;
    };
    try {
      const fresh = createRedisGate({ redis: limiter.redis, prefix: limiter.prefix, keyNamespace: limiter.prefix, keys: [KEY!], ratePerKey: 20, watchReserve: 0 });
      const grant = (await fresh.acquire()) as Grant & { sendBy: number };
      // Read against the handled time, the stall would have become clock difference and sendBy
      // would still lie ~25 ms ahead.
      expect(grant.sendBy).toBeLessThan(localNow());
    } finally {
      commands.harvestLimiterAcquire = original;
    }
  });
});
