import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJob, createSlices, getJob, recordRequests } from '../../src/store/jobs.ts';
import { finishSlice } from '../../src/store/job-runtime.ts';
import { createWatch, finishWatchPass } from '../../src/store/watches.ts';
import { withTransaction } from '../../src/store/db.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import {
  getSlice, getWatch, listDueWatches, listJobs, listSlices, setJobStatus, setSliceStatus, setWatchEnabled,
} from '../helpers/store-rows.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('jobs and slices', () => {
  it('creates a job, lists it, and stamps started/finished on status changes', async () => {
    const id = await createJob(db.pool, { kind: 'search', params: { query: 'a b' }, priority: 'backfill', maxRequests: 50 });
    expect(await getJob(db.pool, id)).toMatchObject({ id, kind: 'search', status: 'queued', params: { query: 'a b' }, maxRequests: 50, startedAt: null });
    expect(await setJobStatus(db.pool, id, 'running')).toBe(true);
    expect((await getJob(db.pool, id))?.startedAt).toBeInstanceOf(Date);
    // Compare-and-set: resuming only from paused does nothing to a running job.
    expect(await setJobStatus(db.pool, id, 'queued', { from: ['paused'] })).toBe(false);
    await setJobStatus(db.pool, id, 'failed', { errorCode: 'API_AUTH_FAILED', errorMessage: 'key rejected', note: 'stopped' });
    const failed = await getJob(db.pool, id);
    expect(failed).toMatchObject({ status: 'failed', errorCode: 'API_AUTH_FAILED', errorMessage: 'key rejected', note: 'stopped' });
    expect(failed?.finishedAt).toBeInstanceOf(Date);
    expect((await listJobs(db.pool, { statuses: ['failed'] })).map((j) => j.id)).toContain(id);
    expect((await listJobs(db.pool, { statuses: ['completed'] })).map((j) => j.id)).not.toContain(id);
    await expect(setJobStatus(db.pool, id, 'bogus' as never)).rejects.toMatchObject({ code: '23514' });
  });

  it('creates slices in order with parents, and changes their status', async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: {} });
    const [root] = await createSlices(db.pool, jobId, [{ kind: 'window', params: { since: '2026-01-01' } }]);
    const children = await createSlices(db.pool, jobId, [
      { kind: 'window', params: { n: 1 }, parentId: root },
      { kind: 'window', params: { n: 2 }, parentId: root },
    ]);
    expect(await setSliceStatus(db.pool, root!, 'split', { from: ['pending'] })).toBe(true);
    const slices = await listSlices(db.pool, jobId);
    expect(slices.map((s) => [s.id, s.parentId, s.status, s.params])).toEqual([
      [root, null, 'split', { since: '2026-01-01' }],
      [children[0], root, 'pending', { n: 1 }],
      [children[1], root, 'pending', { n: 2 }],
    ]);
    expect((await getSlice(db.pool, root!))?.finishedAt).toBeInstanceOf(Date);
    expect((await listSlices(db.pool, jobId, { statuses: ['pending'] })).map((s) => s.id)).toEqual(children);
  });

  it('records requests outside pages, adds them to the job once, and ignores a replayed row', async () => {
    const jobId = await createJob(db.pool, { kind: 'user', params: {} });
    const at = new Date('2026-09-01T00:00:00Z');
    const rows = [
      { endpoint: '/v3/info', keyFingerprint: 'fp', status: 404, durationMs: 30, at, jobId },
      { endpoint: '/v3/key-usage-info', keyFingerprint: 'fp', status: 200, durationMs: 10, at },
    ];
    expect(await withTransaction(db.pool, (c) => recordRequests(c, rows))).toBe(2);
    expect(await recordRequests(db.pool, rows)).toBe(0);
    expect((await getJob(db.pool, jobId))?.requestsSpent).toBe(1);
  });
});

describe('job notes', () => {
  it('keep their newest 2,000 characters: a quiet watch adding a line a pass does not freeze them on its first day', async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
    const sliceIds = await createSlices(db.pool, jobId, Array.from({ length: 30 }, (_, i) => ({ kind: 'search-window', params: { i } })));
    for (const [i, sliceId] of sliceIds.entries()) {
      await finishSlice(db.pool, { sliceId, jobId, status: 'done', note: `pass ${i}: the first page was empty though the service answered (outage?) ${'.'.repeat(40)}` });
    }
    const note = (await getJob(db.pool, jobId))!.note!;
    expect(note.length).toBe(2000);
    expect(note).toMatch(/pass 29: the first page was empty/);
    expect(note).not.toMatch(/pass 0:/);
  });
});

describe('watches', () => {
  it('schedules passes and only moves the watermark forward', async () => {
    const jobId = await createJob(db.pool, { kind: 'mentions', params: { handle: 'jack' }, priority: 'watch', status: 'scheduled' });
    await createWatch(db.pool, { jobId, handle: 'jack', params: {}, everySeconds: 300, nextDueAt: new Date('2026-09-01T00:00:00Z') });
    expect((await listDueWatches(db.pool, new Date('2026-09-01T00:00:01Z'))).map((w) => w.jobId)).toContain(jobId);
    const after = await finishWatchPass(db.pool, jobId, { pass: 1, highWatermarkId: '1900000000000000005', newCount: 3, finishedAt: new Date('2026-09-01T00:01:00Z') });
    expect(after).toMatchObject({ highWatermarkId: '1900000000000000005', passes: 1, lastPassNew: 3 });
    expect(after?.nextDueAt?.toISOString()).toBe('2026-09-01T00:06:00.000Z');
    await finishWatchPass(db.pool, jobId, { pass: 2, highWatermarkId: '1900000000000000001', newCount: 0 });
    expect((await getWatch(db.pool, jobId))?.highWatermarkId).toBe('1900000000000000005');
    // recording pass 2 again (a roll-up re-run after a crash) counts it once
    await finishWatchPass(db.pool, jobId, { pass: 2, highWatermarkId: '1900000000000000001', newCount: 0 });
    expect((await getWatch(db.pool, jobId))?.passes).toBe(2);
    await setWatchEnabled(db.pool, jobId, false);
    expect((await listDueWatches(db.pool, new Date('2027-01-01T00:00:00Z'))).map((w) => w.jobId)).not.toContain(jobId);
  });
});

describe('spaces', () => {
  it('upserts spaces, keeping known fields when a later observation omits them', async () => {
    const { upsertSpaces } = await import('../../src/store/spaces.ts');
    const base = { id: '1YqKDoXyzAbc', title: 'Town hall', state: 'Running', creatorId: '9007199254740993', createdAt: new Date('2026-09-01T00:00:00Z'), startedAt: null, endedAt: null, raw: { v: 1 } };
    await upsertSpaces(db.pool, [base]);
    await upsertSpaces(db.pool, [{ ...base, title: null, state: 'Ended', endedAt: new Date('2026-09-01T02:00:00Z'), raw: { v: 2 } }]);
    const { rows } = await db.pool.query(`SELECT title, state, creator_id::text AS creator, ended_at IS NOT NULL AS ended, raw FROM spaces WHERE id = $1`, [base.id]);
    expect(rows).toEqual([{ title: 'Town hall', state: 'Ended', creator: '9007199254740993', ended: true, raw: { v: 2 } }]);
  });
});
