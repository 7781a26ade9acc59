/**
 * Deleting every key of one Redis prefix: how the demo, the tests and the benches start from (or
 * leave) a clean slate. BullMQ queues and the limiter keep all their keys under `<prefix>:` (on
 * a cluster the queues under `{<prefix>}:`, see queue.ts), so a prefix is a whole deployment's
 * schedule and nothing else's. The CLI reaches Redis only through src/jobs, hence this home.
 */
import { Cluster, Redis } from 'ioredis';

/** One Redis server, or a Redis Cluster (HARVEST_REDIS_CLUSTER): both speak the commands we use. */
export type RedisConnection = Redis | Cluster;

/** SCAN MATCH is a glob: escaping its metacharacters makes a prefix match only itself. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

async function deleteMatching(redis: Redis, pattern: string, oneByOne: boolean): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length === 0) continue;
    // On a cluster node, keys of one SCAN step may hash to different slots: one UNLINK each.
    if (oneByOne) for (const key of keys) deleted += await redis.unlink(key);
    else deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

/**
 * Deletes every key under `<prefix>:` (and, on a cluster, under `{<prefix>}:`, where the queues
 * live) and returns how many went. SCAN (1000 per step) instead of KEYS and UNLINK instead of
 * DEL, so a large prefix never blocks a Redis that others share; on a cluster, node by node.
 */
export async function deletePrefixKeys(redis: RedisConnection, prefix: string): Promise<number> {
  // An empty prefix would match every `:`-bearing key of every deployment on this Redis.
  if (prefix.length === 0) throw new RangeError('deletePrefixKeys needs a non-empty prefix');
  const pattern = `${globEscape(prefix)}:*`;
  if (!(redis instanceof Cluster)) return deleteMatching(redis, pattern, false);
  let deleted = 0;
  for (const node of redis.nodes('master')) {
    for (const p of [pattern, `{${globEscape(prefix)}}:*`]) deleted += await deleteMatching(node, p, true);
  }
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
