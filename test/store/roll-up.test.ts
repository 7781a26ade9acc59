/**
 * How a job ends once no slice is active (rollUp): it fails as a missing target only when a walk
 * met a 404 and no walk read anything, and a repair's run decides a repaired job's end, not the
 * failed walks it re-queued.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reopenJobForRepair } from '../../src/store/audit.ts';
import { finishSlice, TARGET_MISSING_MESSAGE } from '../../src/store/job-runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { newSlices } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Ends a slice as a walk would: its reason and items, then finishSlice. */
async function end(jobId: string, sliceId: string, reason: string, items: number, status: 'done' | 'failed' = 'done') {
  await db.pool.query('UPDATE job_slices SET end_reason = $2, items = $3 WHERE id = $1::bigint', [sliceId, reason, items]);
  return finishSlice(db.pool, { jobId, sliceId, status, ...(status === 'failed' ? { errorCode: 'API_SERVER', errorMessage: 'gave up on a page after 6 tries (500)' } : {}) });
}

async function job(jobId: string) {
  const { rows } = await db.pool.query<{ status: string; error_message: string | null }>('SELECT status, error_message FROM jobs WHERE id = $1::bigint', [jobId]);
  return rows[0]!;
}

describe('a job that met a 404', () => {
  it('fails when no walk read anything (a listing 404 beside a search that found nothing)', async () => {
    const { jobId, sliceIds } = await newSlices(db.pool, 2);
    await end(jobId, sliceIds[0]!, 'not-found', 0);
    expect(await end(jobId, sliceIds[1]!, 'end', 0)).toBe('failed');
    expect(await job(jobId)).toEqual({ status: 'failed', error_message: TARGET_MISSING_MESSAGE });
  });

  it('completes when a walk read pages before its 404 (an account suspended mid-timeline)', async () => {
    const { jobId, sliceIds } = await newSlices(db.pool, 2);
    await end(jobId, sliceIds[0]!, 'not-found', 0);
    expect(await end(jobId, sliceIds[1]!, 'not-found', 120)).toBe('completed');
  });

  it('completes when nothing met a 404, even with nothing read (a search with no match)', async () => {
    const { jobId, sliceIds } = await newSlices(db.pool, 1);
    expect(await end(jobId, sliceIds[0]!, 'end', 0)).toBe('completed');
  });
});

describe('a repaired job', () => {
  it('ends as its repair run ends: completed when the re-queued walk succeeds, though the walk it replaced had failed', async () => {
    const { jobId, sliceIds } = await newSlices(db.pool, 2);
    await end(jobId, sliceIds[0]!, 'end', 40);
    expect(await end(jobId, sliceIds[1]!, 'failed', 0, 'failed')).toBe('failed');
    const repair = await reopenJobForRepair(db.pool, jobId, () => ({ slices: [{ kind: 'search-window', params: { i: 7 } }], budget: null, note: 'repair' }));
    expect((await job(jobId)).status).toBe('queued');
    expect(await end(jobId, repair!.slices[0]!.id, 'end', 20)).toBe('completed');
    // The failed walk keeps why it ended, so audit still counts its range as read only by the repair.
    const { rows } = await db.pool.query<{ status: string; end_reason: string }>('SELECT status, end_reason FROM job_slices WHERE id = $1::bigint', [sliceIds[1]]);
    expect(rows[0]).toEqual({ status: 'done', end_reason: 'failed' });
  });

  it('fails again when the re-queued walk fails too', async () => {
    const { jobId, sliceIds } = await newSlices(db.pool, 1);
    expect(await end(jobId, sliceIds[0]!, 'failed', 0, 'failed')).toBe('failed');
    const repair = await reopenJobForRepair(db.pool, jobId, () => ({ slices: [{ kind: 'search-window', params: { i: 8 } }], budget: null, note: 'repair' }));
    expect(await end(jobId, repair!.slices[0]!.id, 'failed', 0, 'failed')).toBe('failed');
  });
});
