/**
 * Time a job spends paused or parked for quota is kept apart (migration 0017), whoever changes
 * its status, so its ETA counts only the time it ran; so is the time a job sat ended before
 * `audit --repair` reopened it (migration 0021).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reopenJobForRepair } from '../../src/store/audit.ts';
import { setJobControl } from '../../src/store/job-control.ts';
import { etaSeconds } from '../../src/store/job-progress.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { setJobStatus } from '../helpers/store-rows.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const held = async (id: string) =>
  (await db.pool.query<{ held_ms: string; held_since: Date | null }>('SELECT held_ms::text, held_since FROM jobs WHERE id = $1', [id])).rows[0]!;

describe('held time', () => {
  it('adds up pauses and quota parks, counts the current hold in the snapshot, and nothing else', async () => {
    const id = await createJob(db.pool, { kind: 'search', params: { query: 'a' } });
    await setJobStatus(db.pool, id, 'running');
    await sleep(150);
    expect(await held(id)).toEqual({ held_ms: '0', held_since: null });

    expect((await setJobControl(db.pool, id, 'pause'))?.status).toBe('paused');
    await sleep(300);
    // Still paused: the snapshot counts the hold so far.
    expect((await jobSnapshot(db.pool, id))!.heldMs).toBeGreaterThanOrEqual(300);
    expect((await setJobControl(db.pool, id, 'resume'))?.status).toBe('queued');
    const afterPause = Number((await held(id)).held_ms);
    expect(afterPause).toBeGreaterThanOrEqual(300);
    expect(afterPause).toBeLessThan(2000);
    expect((await held(id)).held_since).toBeNull();

    // Parked for quota (the slice runner's path), then running again: added on top.
    await setJobStatus(db.pool, id, 'running');
    await db.pool.query("UPDATE jobs SET status = 'paused_quota' WHERE id = $1", [id]);
    await sleep(200);
    await db.pool.query("UPDATE jobs SET status = 'running' WHERE id = $1", [id]);
    const afterPark = Number((await held(id)).held_ms);
    expect(afterPark - afterPause).toBeGreaterThanOrEqual(200);
    expect(afterPark - afterPause).toBeLessThan(2000);

    // Running, and a change that is not of status, leave it as it is.
    await sleep(100);
    await db.pool.query('UPDATE jobs SET note = $2, status = status WHERE id = $1', [id, 'x']);
    expect(Number((await held(id)).held_ms)).toBe(afterPark);
    expect((await jobSnapshot(db.pool, id))!.heldMs).toBe(afterPark);
  });

  it('a job paused before it started has held nothing its ETA counts', async () => {
    const id = await createJob(db.pool, { kind: 'search', params: { query: 'b' } });
    expect((await setJobControl(db.pool, id, 'pause'))?.status).toBe('paused');
    await sleep(300);
    expect((await jobSnapshot(db.pool, id))!.heldMs).toBe(0);
    expect((await setJobControl(db.pool, id, 'resume'))?.status).toBe('queued');
    expect(await held(id)).toEqual({ held_ms: '0', held_since: null });
    // It starts now; paused a moment after, it holds only that moment.
    await setJobStatus(db.pool, id, 'running');
    await db.pool.query("UPDATE jobs SET status = 'paused_quota' WHERE id = $1", [id]);
    await sleep(150);
    const during = (await jobSnapshot(db.pool, id))!.heldMs;
    expect(during).toBeGreaterThanOrEqual(150);
    expect(during).toBeLessThan(1000);
  });

  it('a job reopened by audit --repair a day after it completed counts that day as held, not run', async () => {
    const DAY = 86_400_000;
    const until = Date.now() - 2 * DAY;
    const since = until - 30 * DAY;
    const id = await createJob(db.pool, { kind: 'search', params: { query: 'c' } });
    await createSlices(db.pool, id, [{ kind: 'search', params: { query: 'c', sinceMs: since, untilMs: until } }]);
    // It ran one hour and completed a day ago.
    await db.pool.query("UPDATE job_slices SET status = 'done', end_reason = 'end' WHERE job_id = $1", [id]);
    await db.pool.query("UPDATE jobs SET status = 'running', started_at = now() - interval '25 hours' WHERE id = $1", [id]);
    await db.pool.query("UPDATE jobs SET status = 'completed', finished_at = now() - interval '24 hours' WHERE id = $1", [id]);
    const gap = { kind: 'search', params: { query: 'c', sinceMs: since, untilMs: since + DAY } };
    expect(await reopenJobForRepair(db.pool, id, () => ({ slices: [gap], budget: null, note: 'repair' }))).not.toBeNull();

    const s = (await jobSnapshot(db.pool, id))!;
    expect(s.status).toBe('queued');
    expect(s.heldMs).toBeGreaterThanOrEqual(DAY - 60_000);
    expect(s.heldMs).toBeLessThanOrEqual(DAY + 60_000);
    // One hour of running walked 30 of the 31 days: about two minutes are left, not most of an hour.
    const eta = etaSeconds({ fractionDone: s.fractionDone, startedAt: s.startedAt!, heldMs: s.heldMs, now: new Date() });
    expect(eta).not.toBeNull();
    expect(eta!).toBeLessThan(600);
  });
});
