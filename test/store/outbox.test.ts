/**
 * The delivery lease: a claim whose snapshot still saw an event due must not take it once another
 * worker leased it meanwhile (ON CONFLICT re-checks the row as it is now).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addEvent, claimDueEvents, EventType } from '../../src/store/outbox.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('claimDueEvents', () => {
  it('does not lease an event another worker leased after its snapshot was taken', async () => {
    await addEvent(db.pool, { type: EventType.TEST, text: 'x', data: {} });
    // Claimed once and given back due (a failed attempt whose wait is over).
    const [first] = await claimDueEvents(db.pool, 't', 10, 60_000);
    expect(first).toBeDefined();
    await db.pool.query(`UPDATE outbox_deliveries SET next_attempt_at = now() - interval '1 second'`);

    // Another worker leases it in a transaction that commits while this claim waits on the row.
    const other = await db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE outbox_deliveries SET next_attempt_at = now() + interval '1 hour'`);
      const claim = claimDueEvents(db.pool, 't', 10, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other.query('COMMIT');
      expect(await claim).toEqual([]);
    } finally {
      other.release();
    }
    expect(await claimDueEvents(db.pool, 't', 10, 60_000)).toEqual([]);
  });
});
