import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletePrefixKeys, deletePrefixKeysAt } from '../../src/jobs/redis-keys.ts';
import { REDIS_URL } from '../helpers/harness.ts';

describe('deleting a prefix\'s keys', () => {
  let redis: Redis;
  const base = `test-rk-${randomBytes(5).toString('hex')}`;
  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    for (const p of [base, `${base}x`, `${base}*`]) await deletePrefixKeys(redis, p);
    redis.disconnect();
  });

  it('removes every key under `<prefix>:` (beyond one SCAN step) and nothing that only starts like it', async () => {
    const mine = Array.from({ length: 2500 }, (_, i) => `${base}:k:${i}`);
    for (let i = 0; i < mine.length; i += 500) await redis.mset(...mine.slice(i, i + 500).flatMap((k) => [k, '1']));
    await redis.hset(`${base}:backfill:meta`, 'a', '1');
    await redis.set(`${base}x:other`, '1');
    await redis.set(base, 'no colon');
    expect(await deletePrefixKeys(redis, base)).toBe(2501);
    expect(await redis.exists(`${base}:k:0`, `${base}:k:2499`, `${base}:backfill:meta`)).toBe(0);
    expect(await redis.get(`${base}x:other`)).toBe('1');
    expect(await redis.get(base)).toBe('no colon');
    await redis.del(base);
  });

  it('treats glob characters in a prefix literally', async () => {
    await redis.set(`${base}*:a`, '1');
    await redis.set(`${base}x:b`, '1');
    expect(await deletePrefixKeysAt(REDIS_URL, `${base}*`)).toBe(1);
    expect(await redis.get(`${base}x:b`)).toBe('1');
  });

  it('refuses an empty prefix', async () => {
    await expect(deletePrefixKeys(redis, '')).rejects.toThrow(RangeError);
  });
});
