/**
 * A key the service refuses for quota (403/402) announced as spent. A usage sync announces
 * `quota.low` when it sees a key fall below 20% or 10% (recordKeyQuota, outbox.ts), but a key that
 * runs out between two syncs (30% left at one, spent before the next) is never seen there: its
 * requests and the usage call itself are then refused. The sync that meets that refusal records
 * the key at level 0 of the same `key_quota_levels` row, so the running out is announced once
 * however many workers' syncs meet a 403, and re-armed by the refill or new period that re-arms
 * the other levels.
 */
import { withTransaction, type Pool } from './db.ts';
import { addEvent, EventType } from './outbox.ts';

/** The `quota.low` level of a key with nothing left. */
export const QUOTA_SPENT_LEVEL = 0;

export async function recordKeyRefusedForQuota(pool: Pool, q: { fingerprint: string; status: number }): Promise<{ notified: boolean }> {
  return withTransaction(pool, async (db) => {
    // The period and its peak stay what the last answered sync saw: a refusal tells neither (a key
    // never synced gets a row with no period and peak 0, which its first answered sync replaces as
    // a new period). The upsert's row lock makes a second worker meeting a 403 at the same moment
    // wait, then find level 0 already taken.
    const { rows } = await db.query<{ peak: string; notified_level: number; valid_until: Date | null }>(
      `INSERT INTO key_quota_levels AS k (fingerprint, valid_until, peak_remaining, remaining)
       VALUES ($1, NULL, 0, 0)
       ON CONFLICT (fingerprint) DO UPDATE SET remaining = 0, updated_at = now()
       RETURNING peak_remaining::text AS peak, notified_level, valid_until`,
      [q.fingerprint],
    );
    const row = rows[0]!;
    if (row.notified_level <= QUOTA_SPENT_LEVEL) return { notified: false };
    await db.query('UPDATE key_quota_levels SET notified_level = $2 WHERE fingerprint = $1', [q.fingerprint, QUOTA_SPENT_LEVEL]);
    const validUntil = row.valid_until?.toISOString() ?? null;
    await addEvent(db, {
      type: EventType.QUOTA_LOW,
      text: `harvest: key ${q.fingerprint} has run out of quota (the service refused it with ${q.status}${validUntil ? `; renews ${validUntil}` : ''}); it is parked until a top-up or its renewal`,
      data: { key: q.fingerprint, level: QUOTA_SPENT_LEVEL, remaining: 0, peak: Number(row.peak), validUntil, status: q.status },
    });
    return { notified: true };
  });
}
