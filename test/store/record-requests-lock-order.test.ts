/**
 * recordRequests (a failed or stale page's requests) against endJob: seen in the Redis-flush
 * reliability test, where the budget ended the job while another walk's page was in flight. That
 * walk's commit was stale, and its accountAttempts met an endJob of a third walk in a deadlock:
 * endJob held the slice rows FOR UPDATE and asked for the job row; recordRequests had updated the
 * job row (requests_spent) and asked, for its slice_id foreign key, for a KEY SHARE on the slice.
 * Postgres killed recordRequests after deadlock_timeout (1 s) and the request was never recorded
 * (api_requests 149, the simulator 150). recordRequests now takes the slices first, as every
 * other writer does (slice rows, then the job row). A deadlock with a writer that takes them the
 * other way round can still kill it: accountAttempts then writes the rows again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountAttempts } from '../../src/jobs/fetch-ahead.ts';
import type { SliceForRun } from '../../src/store/job-runtime.ts';
import { createJob, createSlices, getJob, recordRequests } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function waitUntilBlocked(marker: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
      [`%${marker}%`],
    );
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no statement with ${marker} ever waited for a lock`);
}

describe('recordRequests and endJob', () => {
  it('takes the slice rows before the job row: a job ending meanwhile no longer deadlocks the record away', { timeout: 15_000 }, async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: {}, maxRequests: 10 });
    const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'search', params: {} }]);
    await db.pool.query(`UPDATE job_slices SET status = 'running' WHERE id = $1::bigint`, [sliceId]);

    // endJob's order (lockJobAndSlices): the job's live slices FOR UPDATE, then its job row.
    const ender = await db.pool.connect();
    try {
      await ender.query('BEGIN');
      await ender.query(`SELECT 1 FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running') ORDER BY id FOR UPDATE`, [jobId]);
      const at = new Date();
      const recorded = recordRequests(db.pool, [{ endpoint: 'POST /v3/search-tweets', keyFingerprint: 'fp', status: 200, durationMs: 40, at, jobId, sliceId: sliceId! }]);
      recorded.catch(() => undefined);
      await waitUntilBlocked('INSERT INTO api_requests');
      await ender.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR UPDATE', [jobId]);
      await ender.query(`UPDATE jobs SET status = 'completed' WHERE id = $1::bigint`, [jobId]);
      await ender.query('COMMIT');
      expect(await recorded).toBe(1);
    } finally {
      await ender.query('ROLLBACK').catch(() => undefined);
      ender.release();
    }
    expect((await getJob(db.pool, jobId))?.requestsSpent).toBe(1);
  });
});

describe('accountAttempts', () => {
  it('writes a failed page\'s requests again when Postgres picks it as a deadlock victim', { timeout: 15_000 }, async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: {}, maxRequests: 10 });
    const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'search', params: {} }]);
    const slice = { id: sliceId!, jobId } as SliceForRun;
    // A writer taking the rows job first: it holds the job row, the record takes its KEY SHARE on
    // the slice and waits for the job row, then the writer asks for the slice. The writer checks
    // for deadlocks only after 10 s, so the record's check (deadlock_timeout, 1 s) is the one that
    // finds the cycle, and aborts the record, however loaded the machine.
    const other = await db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SET LOCAL deadlock_timeout = '10s'`);
      await other.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR UPDATE', [jobId]);
      const at = new Date();
      const recorded = accountAttempts(db.pool, slice, [{ endpoint: 'POST /v3/search-tweets', keyFingerprint: 'fp', status: 500, durationMs: 40, at, attempt: 1 }]);
      recorded.catch(() => undefined);
      await waitUntilBlocked('INSERT INTO api_requests');
      await other.query('SELECT 1 FROM job_slices WHERE id = $1::bigint FOR UPDATE', [sliceId]);
      await other.query('COMMIT');
      await recorded;
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      other.release();
    }
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_requests WHERE slice_id = $1::bigint', [sliceId]);
    expect(rows[0]!.n).toBe(1);
    expect((await getJob(db.pool, jobId))?.requestsSpent).toBe(1);
  });
});
