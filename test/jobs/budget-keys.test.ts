/**
 * A job's budget key (`<prefix>:limiter:{ns}:budget:<jobId>`) expires a day after its last write,
 * and a submit replaces whatever key its id already had. Kept for ever, the keys grew by one per
 * budgeted job, and a job 1 of a database recreated on the same prefix took the old job 1's spent
 * budget: it "completed" with 0 requests, "the --max-requests budget is spent".
 */
import { describe, expect, it } from 'vitest';
import { keyNamespaceFor } from '../../src/jobs/limiter/index.ts';
import { limiterLayout } from '../../src/jobs/limiter/key-layout.ts';
import { BUDGET_TTL_MS } from '../../src/jobs/limiter/schedule-keys.ts';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { useHarness } from '../helpers/harness.ts';

describe('job budget keys', () => {
  const h = useHarness();
  const budgetKey = (jobId: string) => limiterLayout(`${h.prefix}:limiter`, keyNamespaceFor(h.config.baseUrl)).budget(jobId);
  const params = { query: 'lang:en', since: '2026-10-01', until: '2026-10-08' };

  const expectTtl = async (key: string) => {
    const ttl = await h.services.redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeGreaterThan(BUDGET_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(BUDGET_TTL_MS);
  };

  it('have a TTL after submit', async () => {
    const jobId = await h.submit({ kind: 'search', params, maxRequests: 20 });
    await expectTtl(budgetKey(jobId));
  });

  it('get a TTL from reconcile, which still never raises a budget', async () => {
    const jobId = await h.submit({ kind: 'search', params, maxRequests: 20 });
    const key = budgetKey(jobId);
    // A key written without one (before this version), with grants spent: reconcile gives it a TTL
    // and keeps the lower of Redis and Postgres (20 left by Postgres, 17 in Redis).
    await h.services.redis.set(key, '17');
    expect(await h.services.redis.pttl(key)).toBe(-1);
    await reconcile({ pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate });
    await expectTtl(key);
    expect(await h.services.gate.budgetRemaining(jobId)).toBe(17);
  });

  it('a new job whose id an old, spent budget key names gets its own budget', async () => {
    // The id the next job gets: a database recreated or restored on this prefix hands it out again.
    const { rows } = await h.services.pool.query<{ last: string | null }>(
      `SELECT pg_sequence_last_value(pg_get_serial_sequence('jobs', 'id'))::text AS last`,
    );
    const next = String(Number(rows[0]!.last ?? 0) + 1);
    await h.services.redis.set(budgetKey(next), '0');
    const jobId = await h.submit({ kind: 'search', params, maxRequests: 20 });
    expect(jobId).toBe(next);
    expect(await h.services.gate.budgetRemaining(jobId)).toBe(20);
    const done = await h.runUntil(jobId, { timeoutMs: 30_000 });
    // Its whole budget, not the old job's 0 ("completed", 0 requests, "budget is spent").
    expect(done.requests).toBe(20);
  });
});
