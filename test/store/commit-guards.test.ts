/**
 * What a page commit decides beside the rows (review findings): the stale-pages run resets while
 * the walk still moves into the past; the end reason rides in the commit that ends the walk, under
 * its guard; a commit never undoes a pause; recordSliceEnd with a lease is refused to a walk that
 * lost its slice; commitPageAlone gives the slice as the commit left it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage, commitPageAlone, type PageCommit } from '../../src/store/commit-page.ts';
import { StaleSliceError } from '../../src/store/errors.ts';
import { setJobControl } from '../../src/store/job-control.ts';
import { markSliceRunning } from '../../src/store/job-runtime.ts';
import { recordSliceEnd, SliceEndReason } from '../../src/store/slice-ends.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { idSequence, makeTweet, makeUser, newSlices as slicesOf, pageOf } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const id = idSequence('1810000000000000000');

const newSlices = (n: number, lease = 'lease-a') => slicesOf(db.pool, n, { lease });
const page = (jobId: string, sliceId: string, overrides: Partial<PageCommit>): PageCommit => pageOf({ jobId, sliceId }, { lease: 'lease-a', ...overrides });

async function sliceRow(sliceId: string): Promise<{ status: string; end_reason: string | null; stale_pages: number }> {
  const { rows } = await db.pool.query<{ status: string; end_reason: string | null; stale_pages: number }>(
    'SELECT status, end_reason, stale_pages FROM job_slices WHERE id = $1::bigint',
    [sliceId],
  );
  return rows[0]!;
}

describe('page commit guards', () => {
  it('pages of stored tweets that still lower the slice oldest id are not stale; a page that does not is', async () => {
    const { jobId, sliceIds } = await newSlices(2);
    const [first, second] = sliceIds as [string, string];
    const author = makeUser(id('100'));
    // Ids in ascending order: tweets[0] is the oldest.
    const tweets = Array.from({ length: 12 }, () => makeTweet(id(), author));
    // An earlier pass stored all of them for the job.
    await commitPage(db.pool, page(jobId, first, { tweets, nextCursor: null, sliceDone: true }));
    // This pass re-reads them newest first, one a page, on its way to older tweets.
    let cursor: string | null = null;
    for (let i = tweets.length - 1; i >= 0; i--) {
      const next = `p${i}`;
      const r = await commitPage(db.pool, page(jobId, second, { tweets: [tweets[i]!], expectedCursor: cursor, nextCursor: next }));
      expect(r.newTweets).toBe(0);
      // The slice's first page has no oldest id to lower: it counts; every later one moves on.
      expect(r.stalePages).toBe(i === tweets.length - 1 ? 1 : 0);
      cursor = next;
    }
    // The same oldest tweet again with a fresh cursor: nothing new, not moving: stale.
    const again = await commitPage(db.pool, page(jobId, second, { tweets: [tweets[0]!], expectedCursor: cursor, nextCursor: 'q1' }));
    expect(again.stalePages).toBe(1);
  });

  it("a walk cannot take a slice once its job is paused or cancelled, though it found the job live a moment before", async () => {
    for (const action of ['pause', 'cancel'] as const) {
      const { jobId, sliceIds } = await slicesOf(db.pool, 1);
      const sliceId = sliceIds[0]!;
      // The walk read the job live, then the pause landed before it took the slice.
      expect(await setJobControl(db.pool, jobId, action)).toBeTruthy();
      const before = await db.pool.query<{ status: string; lease: string | null }>('SELECT status, lease FROM job_slices WHERE id = $1::bigint', [sliceId]);
      expect(await markSliceRunning(db.pool, sliceId, jobId, 'late-walk')).toBe(false);
      const after = await db.pool.query<{ status: string; lease: string | null }>('SELECT status, lease FROM job_slices WHERE id = $1::bigint', [sliceId]);
      expect(after.rows[0]).toEqual(before.rows[0]);
    }
  });

  it('the page that ends a walk writes its end reason; a page of a walk that lost the slice writes nothing', async () => {
    const { jobId, sliceIds } = await newSlices(1);
    const sliceId = sliceIds[0]!;
    await commitPage(db.pool, page(jobId, sliceId, {}));
    // A newer walk takes the slice over; the old walk's last page is refused with its reason.
    expect(await markSliceRunning(db.pool, sliceId, jobId, 'lease-b')).toBe(true);
    await expect(
      commitPage(db.pool, page(jobId, sliceId, { expectedCursor: 'c1', nextCursor: null, sliceDone: true, endReason: SliceEndReason.END })),
    ).rejects.toBeInstanceOf(StaleSliceError);
    expect(await sliceRow(sliceId)).toMatchObject({ status: 'running', end_reason: null });
    // Nor can the old walk write a reason for an end without a page.
    await recordSliceEnd(db.pool, sliceId, SliceEndReason.STALE_PAGES, 'lease-a');
    expect((await sliceRow(sliceId)).end_reason).toBeNull();
    // The walk holding the slice ends it, with its reason.
    await commitPage(
      db.pool,
      page(jobId, sliceId, { lease: 'lease-b', expectedCursor: 'c1', nextCursor: null, sliceDone: true, endReason: SliceEndReason.BOUND }),
    );
    expect(await sliceRow(sliceId)).toMatchObject({ status: 'done', end_reason: 'bound' });
  });

  it('recordSliceEnd with the walk lease writes the reason', async () => {
    const { sliceIds } = await newSlices(1);
    await recordSliceEnd(db.pool, sliceIds[0]!, SliceEndReason.NOT_FOUND, 'lease-a');
    expect((await sliceRow(sliceIds[0]!)).end_reason).toBe('not-found');
  });

  it('a page committed after a pause keeps the slice pending and tells the walk its job is paused', async () => {
    const { jobId, sliceIds } = await newSlices(1);
    const sliceId = sliceIds[0]!;
    await commitPage(db.pool, page(jobId, sliceId, {}));
    expect(await setJobControl(db.pool, jobId, 'pause')).toMatchObject({ status: 'paused' });
    const { after } = await commitPageAlone(db.pool, page(jobId, sliceId, { expectedCursor: 'c1', nextCursor: 'c2' }));
    expect(after).toMatchObject({ status: 'pending', cursor: 'c2', jobStatus: 'paused' });
    expect((await sliceRow(sliceId)).status).toBe('pending');
    // A page that ends the walk still ends it.
    const { after: last } = await commitPageAlone(db.pool, page(jobId, sliceId, { expectedCursor: 'c2', nextCursor: null, sliceDone: true, endReason: 'end' }));
    expect(last).toMatchObject({ status: 'done', jobStatus: 'paused' });
    expect(await sliceRow(sliceId)).toMatchObject({ status: 'done', end_reason: 'end' });
  });
});
