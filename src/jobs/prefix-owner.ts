/**
 * One database per HARVEST_REDIS_PREFIX, the mirror of claimWorkerPrefix (one prefix per
 * database). Redis names hold job and slice ids (budget:<jobId>, s-<sliceId>, watch-<jobId>) and
 * ids start at 1 in every database, so two databases on one prefix (both left at the default)
 * spent one --max-requests budget between their two job 1s, the loser ending `completed` after a
 * fraction of its requests, and ran each other's queue entries: all silently. A process that works
 * the queue binds the prefix to its database's identity (migration 0025) and refuses another's.
 */
import { ConfigError } from '../errors.ts';
import { databaseIdentity } from '../store/database-identity.ts';
import type { Queryable } from '../store/db.ts';
import type { RedisConnection } from './redis-keys.ts';

/** `<prefix>:database`: the identity of the one database this prefix serves. */
export function prefixOwnerKey(prefix: string): string {
  return `${prefix}:database`;
}

/**
 * Writes this database's identity to `<prefix>:database` when it holds none (SET NX, no expiry:
 * every process that opens the queue writes it again, so a flushed Redis is bound again at the
 * next start), or throws ConfigError when it holds another database's.
 */
export async function claimPrefixForDatabase(redis: RedisConnection, db: Queryable, prefix: string): Promise<void> {
  const id = await databaseIdentity(db);
  const key = prefixOwnerKey(prefix);
  // A second try only when the key vanished between the SET and the GET (a flush, a DEL).
  for (let attempt = 0; attempt < 2; attempt++) {
    if ((await redis.set(key, id, 'NX')) === 'OK') return;
    const owner = await redis.get(key);
    if (owner === id) return;
    if (owner !== null) {
      throw new ConfigError(
        `HARVEST_REDIS_PREFIX=${prefix} is used by another database (${owner}; this one is ${id}): give each database its own HARVEST_REDIS_PREFIX ` +
          `(job ids start at 1 in each, so two on one prefix spend each other's budgets and run each other's slices); if that database is gone for good, delete the key ${key}`,
      );
    }
  }
}
