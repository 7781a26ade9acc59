/**
 * One HARVEST_REDIS_PREFIX per database (migration 0014): a worker says its prefix at start and
 * every minute, and does not start while workers of another prefix were seen lately.
 */
import { ConfigError } from '../errors.ts';
import { withTransaction, type Pool, type Queryable } from './db.ts';

/** How often a running worker says its prefix. */
export const PREFIX_HEARTBEAT_MS = 60_000;
/** A prefix not said for this long has no worker left: another may take the database. */
export const PREFIX_STALE_MS = 3 * PREFIX_HEARTBEAT_MS;

export async function touchWorkerPrefix(db: Queryable, prefix: string): Promise<void> {
  await db.query(
    `INSERT INTO worker_prefixes (redis_prefix, last_seen_at) VALUES ($1, now())
     ON CONFLICT (redis_prefix) DO UPDATE SET last_seen_at = now()`,
    [prefix],
  );
}

/**
 * Records `prefix` as this database's, or throws ConfigError naming the other prefix whose workers
 * were seen within PREFIX_STALE_MS. One transaction with the table locked, so two workers of
 * different prefixes starting at once cannot both pass.
 */
export async function claimWorkerPrefix(pool: Pool, prefix: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query('LOCK TABLE worker_prefixes IN SHARE ROW EXCLUSIVE MODE');
    const { rows } = await client.query<{ redis_prefix: string; ago_s: number }>(
      `SELECT redis_prefix, extract(epoch FROM now() - last_seen_at)::int AS ago_s FROM worker_prefixes
        WHERE redis_prefix <> $1 AND last_seen_at > now() - make_interval(secs => $2::double precision / 1000)
        ORDER BY last_seen_at DESC LIMIT 1`,
      [prefix, PREFIX_STALE_MS],
    );
    const other = rows[0];
    if (other) {
      throw new ConfigError(
        `this database is worked with HARVEST_REDIS_PREFIX=${other.redis_prefix} (a worker was seen ${other.ago_s} s ago), not ${prefix}: ` +
          `one prefix per database (two would each queue every slice and grant each budget twice); stop those workers, and this one may start ${PREFIX_STALE_MS / 60_000} minutes after the last stopped`,
      );
    }
    await touchWorkerPrefix(client, prefix);
  });
}
