/**
 * How a finished watch pass is recorded (finishWatchPass, passEnd) in the cases a review found
 * wrong: the same pass recorded twice, a resumed pass that read nothing below the cut one, a
 * resumed first pass that reached its floor, and two passes of one identity finishing at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TWITTER_EPOCH_MS } from '../../src/store/snowflake.ts';
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
const NEWEST = '1900000000000000200';
const DAY = 86_400_000;
const idAt = (ms: number): string => ((BigInt(ms) - BigInt(TWITTER_EPOCH_MS)) << 22n).toString();

async function mentionsWatch(identity: string, watch: { seedWatermarkId?: string; floorMs?: number } = { seedWatermarkId: W }): Promise<string> {
  const jobId = await createJob(db.pool, { kind: 'mentions', params: { handle: 'jack' }, priority: 'watch', status: 'running' });
  await createWatch(db.pool, { jobId, handle: 'jack', params: {}, everySeconds: null, identity, ...watch });
  return jobId;
}

/** A pass slice with `params`, ended as given. */
async function endedPass(
  jobId: string,
  kind: 'mentions' | 'search',
  params: Record<string, unknown>,
  end: { reason: string; emptyPages: number; oldest: string; newest: string },
): Promise<void> {
  const [sliceId] = await createSlices(db.pool, jobId, [{ kind, params }]);
  await db.pool.query(
    "UPDATE job_slices SET status = 'done', end_reason = $2, empty_pages = $3, oldest_tweet_id = $4, newest_tweet_id = $5 WHERE id = $1",
    [sliceId, end.reason, end.emptyPages, end.oldest, end.newest],
  );
}

describe('recording a watch pass', () => {
  it('the same empty-ended pass recorded twice (a roll-up re-run after a crash) stays cut short', async () => {
    const jobId = await mentionsWatch('mentions:rerun');
    await endedPass(jobId, 'mentions', { handle: 'jack', watermarkId: W, floorMs: null, pass: 1 }, { reason: 'end', emptyPages: 1, oldest: '1900000000000000180', newest: NEWEST });
    await finishWatchPass(db.pool, jobId, { pass: 1, highWatermarkId: NEWEST, newCount: 5 });
    await finishWatchPass(db.pool, jobId, { pass: 1, highWatermarkId: NEWEST, newCount: 5 });
    const twice = (await getWatchRow(db.pool, jobId))!;
    // Its own gap is not an earlier pass's: the watermark stays below the unread range.
    expect(twice.highWatermarkId).toBe(W);
    expect(twice.gaps).toMatchObject([{ afterId: W, beforeId: '1900000000000000180', reason: 'empty-end' }]);
  });

  it('a resumed search pass that read new tweets but nothing below the cut pass keeps the unread range', async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' }, priority: 'watch', status: 'running' });
    await createWatch(db.pool, { jobId, handle: null, params: {}, everySeconds: 600, identity: 'search:resumed', seedWatermarkId: W, kind: 'search' });
    const [cutOldest, cutNewest] = ['1900000000000000150', NEWEST];
    const gap = { afterId: W, beforeId: cutOldest, readFromId: cutNewest, reason: 'failed', pass: 1, jobId, at: new Date().toISOString() };
    await db.pool.query('UPDATE watches SET gaps = $2::jsonb WHERE job_id = $1', [jobId, JSON.stringify([gap])]);
    // Above the cut pass's newest it read 210..230; below its oldest the service answered empty at once.
    const params = { query: 'x', order: 'latest', watermarkId: W, pass: 2, resumeFromId: cutNewest, resumeBelowId: cutOldest };
    await endedPass(jobId, 'search', params, { reason: 'end', emptyPages: 1, oldest: '1900000000000000210', newest: '1900000000000000230' });
    await finishWatchPass(db.pool, jobId, { pass: 2, highWatermarkId: '1900000000000000230', newCount: 5 });
    const w = (await getWatchRow(db.pool, jobId))!;
    expect(w.highWatermarkId).toBe(W);
    expect(w.gaps).toMatchObject([{ afterId: W, beforeId: cutOldest, readFromId: cutNewest, reason: 'empty-end', pass: 2 }]);
  });

  it('a resumed first pass that read below the cut pass and ended on an empty page at its floor is complete', async () => {
    const floor = Date.parse('2026-09-01T00:00:00Z');
    const jobId = await mentionsWatch('mentions:first-floor', { floorMs: floor });
    const [cutNewest, cutOldest] = [idAt(floor + 20 * DAY), idAt(floor + 10 * DAY)];
    const params = { handle: 'jack', watermarkId: null, floorMs: floor, pass: 1, resumeFromId: cutNewest, resumeBelowId: cutOldest };
    const newest = idAt(floor + 25 * DAY);
    await endedPass(jobId, 'mentions', params, { reason: 'end', emptyPages: 1, oldest: idAt(floor + 3_600_000), newest });
    await finishWatchPass(db.pool, jobId, { pass: 1, highWatermarkId: newest, newCount: 50 });
    const w = (await getWatchRow(db.pool, jobId))!;
    expect(w.gaps).toEqual([]);
    expect(w.highWatermarkId).toBe(newest);
  });

  it('two passes of one identity finishing at once do not deadlock', async () => {
    const [a, b] = [await mentionsWatch('mentions:both'), await mentionsWatch('mentions:both')];
    for (const jobId of [a, b]) {
      await endedPass(jobId, 'mentions', { handle: 'jack', watermarkId: W, floorMs: null, pass: 1 }, { reason: 'bound', emptyPages: 0, oldest: W, newest: NEWEST });
    }
    const [c1, c2] = [await db.pool.connect(), await db.pool.connect()];
    try {
      await c1.query('BEGIN');
      await c2.query('BEGIN');
      // c1 holds a's watch row, as a pass of a that has begun writing does.
      await c1.query('UPDATE watches SET passes = passes WHERE job_id = $1', [a]);
      const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code?: string }) => e.code ?? String(e));
      const second = outcome(finishWatchPass(c2, b, { pass: 1, highWatermarkId: NEWEST, newCount: 0 }));
      await new Promise((r) => setTimeout(r, 200));
      const first = await outcome(finishWatchPass(c1, a, { pass: 1, highWatermarkId: NEWEST, newCount: 0 }));
      await c1.query(first === 'ok' ? 'COMMIT' : 'ROLLBACK');
      expect([first, await second]).toEqual(['ok', 'ok']);
      await c2.query('COMMIT');
    } finally {
      await c1.query('ROLLBACK').catch(() => undefined);
      await c2.query('ROLLBACK').catch(() => undefined);
      c1.release();
      c2.release();
    }
    for (const jobId of [a, b]) expect((await getWatchRow(db.pool, jobId))!.highWatermarkId).toBe(NEWEST);
  });
});
