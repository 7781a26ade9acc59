/**
 * Deleting every key of one Redis prefix: how the demo, the tests and the benches start from (or
 * leave) a clean slate. BullMQ queues and the limiter keep all their keys under `<prefix>:`, so a
 * prefix is a whole deployment's schedule and nothing else's. The CLI reaches Redis only through
 * src/jobs, hence this home.
 */
import { Redis } from 'ioredis';

/** SCAN MATCH is a glob: escaping its metacharacters makes a prefix match only itself. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Deletes every key under `<prefix>:` and returns how many went. SCAN (1000 per step) instead of
 * KEYS and UNLINK instead of DEL, so a large prefix never blocks a Redis that others share.
 */
export async function deletePrefixKeys(redis: Redis, prefix: string): Promise<number> {
  // An empty prefix would match every `:`-bearing key of every deployment on this Redis.
  if (prefix.length === 0) throw new RangeError('deletePrefixKeys needs a non-empty prefix');
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${globEscape(prefix)}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** The same over a short-lived connection to `url` (tests and benches clean up after closing their services). */
export async function deletePrefixKeysAt(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    return await deletePrefixKeys(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
