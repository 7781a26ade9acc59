/**
 * A job's ending, roll-up, pause, failure and repair take its row FOR NO KEY UPDATE, the lock an
 * UPDATE of the row takes anyway: they still exclude each other and the page commits, but no
 * longer queue behind a transaction that only inserted a row naming the job (the request log,
 * quarantine, the outbox), whose foreign key holds KEY SHARE on the job until it commits.
 * FOR UPDATE conflicts with KEY SHARE, so each of these waited for such a transaction to end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reopenJobForRepair } from '../../src/store/audit.ts';
import { setJobControl } from '../../src/store/job-control.ts';
import { failJob, finishSlice, rollUpJob } from '../../src/store/job-runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { newSlices } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `step` while another transaction holds KEY SHARE on the job (an uncommitted request-log row naming it). */
async function besideKeyShare<T>(jobId: string, step: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const holder = await db.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(
      `INSERT INTO api_requests (at, endpoint, key_fingerprint, status, duration_ms, job_id) VALUES (now(), 'probe', 'k', 200, 1, $1::bigint)`,
      [jobId],
    );
    const started = performance.now();
    // Bounded: with the old lock the step waits until the holder ends, which here is only after it.
    const result = await Promise.race([
      step(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('waited 3 s behind a KEY SHARE lock')), 3_000)),
    ]);
    return { result, ms: performance.now() - started };
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
}

describe('the job row lock of control and end steps', () => {
  it('finishSlice and rollUpJob do not wait for a transaction that holds KEY SHARE on the job', async () => {
    const job = await newSlices(db.pool, 2);
    const first = await besideKeyShare(job.jobId, () => finishSlice(db.pool, { jobId: job.jobId, sliceId: job.sliceIds[0]!, status: 'done' }));
    expect(first.result).toBe('queued');
    const second = await besideKeyShare(job.jobId, () => finishSlice(db.pool, { jobId: job.jobId, sliceId: job.sliceIds[1]!, status: 'done' }));
    expect(second.result).toBe('completed');
    expect((await besideKeyShare(job.jobId, () => rollUpJob(db.pool, job.jobId))).result).toBe('completed');
  });

  it('pause, resume, cancel and failJob do not wait for it either', async () => {
    const job = await newSlices(db.pool, 1);
    expect((await besideKeyShare(job.jobId, () => setJobControl(db.pool, job.jobId, 'pause'))).result?.status).toBe('paused');
    expect((await besideKeyShare(job.jobId, () => setJobControl(db.pool, job.jobId, 'resume'))).result?.status).toBe('queued');
    expect((await besideKeyShare(job.jobId, () => setJobControl(db.pool, job.jobId, 'cancel'))).result?.status).toBe('cancelled');
    const other = await newSlices(db.pool, 1);
    await besideKeyShare(other.jobId, () => failJob(db.pool, other.jobId, 'TEST', 'failed on purpose'));
    const { rows } = await db.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1::bigint', [other.jobId]);
    expect(rows[0]?.status).toBe('failed');
  });

  it('a repair reopening the job does not wait for it', async () => {
    const job = await newSlices(db.pool, 1);
    await finishSlice(db.pool, { jobId: job.jobId, sliceId: job.sliceIds[0]!, status: 'done' });
    const reopened = await besideKeyShare(job.jobId, () =>
      reopenJobForRepair(db.pool, job.jobId, () => ({ slices: [{ kind: 'search-window', params: { i: 9 } }], budget: null, note: 'repair' })),
    );
    expect(reopened.result?.slices).toHaveLength(1);
  });
});
