/**
 * The Redis gate's order of one process's waiters (AcquireOptions.remainingPages): of one job's
 * waiters the one whose walk expects the most pages after its request goes first, in the job's own
 * place, so the job's walks end together; another job's place is served when it comes, and a
 * waiter with no estimate where it stands. Against real Redis, one key at 20 requests a second.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisGate } from '../../src/jobs/limiter/redis-gate.ts';
import { apiKeys, connectRedis, deletePrefix, randomPrefix } from './fixtures/limiter-redis.ts';

let redis: Redis;
const prefix = randomPrefix();
beforeAll(() => {
  redis = connectRedis();
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  await redis.quit();
});

describe('the gate serves a job’s longest walk first', () => {
  it('in the job’s own places, other jobs’ places in turn, waiters with no estimate where they stand', async () => {
    const gate = createRedisGate({ redis, prefix, keyNamespace: prefix, keys: apiKeys('order-key'), ratePerKey: 20, watchReserve: 0 });
    // The key's first slot is taken: every waiter below waits its turn (~51 ms apart).
    await gate.acquire({ jobId: 'warm' });
    const order: string[] = [];
    const wait = (name: string, options: { jobId: string; remainingPages?: number }) => gate.acquire(options).then(() => order.push(name));
    // 'a' reaches the front alone (no estimate: served where it stands, whether or not it is told
    // to wait); the rest queue behind it in this order.
    await Promise.all([
      wait('a', { jobId: 'j' }),
      wait('b', { jobId: 'j', remainingPages: 2 }),
      wait('c', { jobId: 'k', remainingPages: 9 }),
      wait('d', { jobId: 'j', remainingPages: 8 }),
      wait('e', { jobId: 'j' }),
    ]);
    // Places j k j j after 'a': j's first goes to 'd' (8 left, more than 'b'), 'b' takes d's place;
    // k's to 'c'; 'e' has no estimate and is served in its own. First come would read a b c d e.
    expect(order).toEqual(['a', 'd', 'c', 'b', 'e']);
  });
});
