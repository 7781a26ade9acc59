/**
 * This database's identity (migration 0025): a random id, made the first time it is read, that a
 * HARVEST_REDIS_PREFIX is bound to (src/jobs/prefix-owner.ts). Made lazily, not by the migration,
 * so a database copied from a migrated template gets its own.
 */
import type { Queryable } from './db.ts';

export async function databaseIdentity(db: Queryable): Promise<string> {
  // Two statements: the SELECT's own snapshot sees the row a process that read it first at the
  // same time committed (one statement's snapshot, taken before that commit, would see none).
  await db.query('INSERT INTO database_identity DEFAULT VALUES ON CONFLICT (singleton) DO NOTHING');
  const { rows } = await db.query<{ id: string }>('SELECT id::text FROM database_identity');
  return rows[0]!.id;
}
