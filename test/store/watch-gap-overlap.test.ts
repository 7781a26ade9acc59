/**
 * Two jobs of one watch identity whose passes overlap: one cut short after the other completed
 * from the same watermark leaves no gap, as the complete one read that range.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { createWatch, finishWatchPass, getWatchRow } from '../../src/store/watches.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const W = '1900000000000000100';
const OLDEST_READ = '1900000000000000150';
const NEWEST = '1900000000000000200';

async function watchJob(identity: string): Promise<string> {
  const jobId = await createJob(db.pool, { kind: 'mentions', params: { handle: 'jack' }, priority: 'watch', status: 'running' });
  await createWatch(db.pool, { jobId, handle: 'jack', params: {}, everySeconds: null, identity, seedWatermarkId: W });
  return jobId;
}

/** A pass slice from watermark W, ended as given. */
async function passFromW(jobId: string, end: { status: 'done' | 'failed'; reason: string; oldest: string; newest: string }): Promise<void> {
  const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'mentions', params: { handle: 'jack', watermarkId: W, floorMs: null, pass: 1 } }]);
  await db.pool.query(
    'UPDATE job_slices SET status = $2, end_reason = $3, oldest_tweet_id = $4, newest_tweet_id = $5 WHERE id = $1',
    [sliceId, end.status, end.reason, end.oldest, end.newest],
  );
}

describe('overlapping passes of one identity', () => {
  it('a pass cut short after another from the same watermark completed records no gap', async () => {
    const [a, b] = [await watchJob('mentions:overlap'), await watchJob('mentions:overlap')];
    await passFromW(b, { status: 'done', reason: 'bound', oldest: W, newest: NEWEST });
    await finishWatchPass(db.pool, b, { pass: 1, highWatermarkId: NEWEST, newCount: 10 });
    await passFromW(a, { status: 'failed', reason: 'failed', oldest: OLDEST_READ, newest: NEWEST });
    await finishWatchPass(db.pool, a, { pass: 1, highWatermarkId: NEWEST, newCount: 0 });
    for (const job of [a, b]) expect(await getWatchRow(db.pool, job)).toMatchObject({ highWatermarkId: NEWEST, gaps: [] });
  });

  it('cut short first, the gap is recorded, and the complete pass closes it', async () => {
    const [a, b] = [await watchJob('mentions:overlap2'), await watchJob('mentions:overlap2')];
    await passFromW(a, { status: 'failed', reason: 'failed', oldest: OLDEST_READ, newest: NEWEST });
    await finishWatchPass(db.pool, a, { pass: 1, highWatermarkId: NEWEST, newCount: 0 });
    expect((await getWatchRow(db.pool, b))!.gaps).toEqual([expect.objectContaining({ afterId: W, beforeId: OLDEST_READ })]);
    await passFromW(b, { status: 'done', reason: 'bound', oldest: W, newest: NEWEST });
    await finishWatchPass(db.pool, b, { pass: 1, highWatermarkId: NEWEST, newCount: 10 });
    for (const job of [a, b]) expect(await getWatchRow(db.pool, job)).toMatchObject({ highWatermarkId: NEWEST, gaps: [] });
  });
});
