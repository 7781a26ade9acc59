/**
 * The outbox in Postgres: the delivery lease (a claim whose snapshot still saw an event due must
 * not take it once another worker leased it meanwhile: ON CONFLICT re-checks the row as it is now),
 * the Slack escape every event's text gets once, whoever writes it, and what the schema promises.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pauseJobForQuota } from '../../src/store/job-runtime.ts';
import { createJob } from '../../src/store/jobs.ts';
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

  it("claims for two webhooks at the same moment each get the events; a second claim for the same webhook gets none", async () => {
    await addEvent(db.pool, { type: EventType.TEST, text: 'a', data: {} });
    await addEvent(db.pool, { type: EventType.TEST, text: 'b', data: {} });
    // One worker's claim for webhook 1, caught in the middle (its transaction still open).
    const other = await db.pool.connect();
    try {
      await other.query('BEGIN');
      const first = await claimDueEvents(other, 'w1', 10, 60_000);
      expect(first.length).toBeGreaterThanOrEqual(2);
      // Webhook 2's claim is not kept from them (row locks with SKIP LOCKED skipped them all).
      const second = await claimDueEvents(db.pool, 'w2', 10, 60_000);
      expect(second.map((e) => e.outboxId)).toEqual(first.map((e) => e.outboxId));
      // Webhook 1's own second claim gets nothing rather than sending them twice.
      expect(await claimDueEvents(db.pool, 'w1', 10, 60_000)).toEqual([]);
      await other.query('COMMIT');
    } finally {
      other.release();
    }
    expect(await claimDueEvents(db.pool, 'w1', 10, 60_000)).toEqual([]);
  });
});

describe('event text', () => {
  const payloadOf = async (jobId: string) =>
    (await db.pool.query<{ payload: { text: string; data: Record<string, unknown> } }>('SELECT payload FROM outbox WHERE job_id = $1::bigint', [jobId])).rows;

  it("a quota park's note (which can quote a service message) reaches Slack escaped; data keeps it raw", async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
    const note = 'no key can grant: service said "<!channel> quota gone, see <https://evil.example|status> & retry"';
    await pauseJobForQuota(db.pool, jobId, note);
    const [event] = await payloadOf(jobId);
    expect(event!.payload.text).toBe(
      `harvest: job ${jobId} (search) no key can grant: service said "&lt;!channel&gt; quota gone, see &lt;https://evil.example|status&gt; &amp; retry"`,
    );
    expect(event!.payload.data.note).toBe(note);
  });

  it('is escaped exactly once: addEvent gives it raw, and text that looks escaped already is escaped again', async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
    await addEvent(db.pool, { type: EventType.JOB_FAILED, jobId, text: 'failed: <!here> &lt;b&gt; & co', data: { error: '<!here>' } });
    const [event] = await payloadOf(jobId);
    expect(event!.payload.text).toBe('failed: &lt;!here&gt; &amp;lt;b&amp;gt; &amp; co');
    expect(event!.payload.data.error).toBe('<!here>');
  });

  it('is escaped whichever statement writes the event', async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
    await db.pool.query(`INSERT INTO outbox (type, job_id, payload) VALUES ('test', $1::bigint, jsonb_build_object('text', '<!everyone>', 'data', '{}'::jsonb))`, [jobId]);
    expect((await payloadOf(jobId))[0]!.payload.text).toBe('&lt;!everyone&gt;');
  });
});

describe('the schema', () => {
  it('does not call outbox.id the delivery order: several workers and retries do not keep it', async () => {
    const { rows } = await db.pool.query<{ comment: string }>(
      `SELECT col_description('outbox'::regclass, a.attnum) AS comment FROM pg_attribute a WHERE a.attrelid = 'outbox'::regclass AND a.attname = 'id'`,
    );
    expect(rows[0]!.comment).not.toMatch(/^Row id: delivery order/);
    expect(rows[0]!.comment).toContain('Not a delivery order');
  });
});
