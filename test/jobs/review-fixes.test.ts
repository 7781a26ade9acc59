/**
 * Behaviours that a review of the runner found missing: a failed watch pass keeps the watermark,
 * a job whose last slice ended while paused completes on resume, search slices split exactly when
 * the service sends whole-second timestamps, and one refused key of several does not fail a job.
 */
import { describe, expect, it } from 'vitest';
import { controlJob } from '../../src/jobs/control.ts';
import { Harvester } from '../../src/jobs/harvester.ts';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { commitPage } from '../../src/store/commit-page.ts';
import { finishSlice } from '../../src/store/job-runtime.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { getWatch } from '../helpers/store-rows.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('runner edge cases', () => {
  const h = useHarness({ keys: ['key-a', 'key-b'] });

  it('a failed watch pass does not move the watermark (the next pass must read what it missed)', async () => {
    const jobId = await h.submit({ kind: 'mentions', params: { handle: 'nobody_here', everySeconds: 3600 } });
    const { rows } = await h.services.pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1', [jobId]);
    const sliceId = rows[0]!.id;
    const tweet = h.sim.world.tweets;
    const newest = tweet.idString(tweet.count - 1);
    // one page of the pass committed (its newest id recorded on the slice), then the pass fails
    await h.services.pool.query("UPDATE job_slices SET newest_tweet_id = $2::bigint, status = 'running' WHERE id = $1", [sliceId, newest]);
    await finishSlice(h.services.pool, { sliceId, jobId, status: 'failed', errorCode: 'API_TRANSIENT', errorMessage: 'gave up' });
    expect((await getWatch(h.services.pool, jobId))?.highWatermarkId).toBeNull();
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('scheduled');
  });

  it('a tick between the last commit of a pass and its roll-up finishes that pass instead of starting another', async () => {
    const w = h.sim.world;
    const target = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && w.mentionsOf(u.index).length > 3)!;
    // (no --since: with it, a backfill would seed the watermark at its upper bound, above `newest`)
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600 } });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    const before = (await getWatch(h.services.pool, jobId))!;
    // pass 2's last page committed (slice done, newest id recorded), the worker died before the roll-up
    const newest = w.tweets.idString(w.tweets.count - 1);
    const { rows } = await h.services.pool.query<{ id: string }>(
      `INSERT INTO job_slices (job_id, kind, params, status, newest_tweet_id)
       VALUES ($1, 'mentions', $2::jsonb, 'done', $3::bigint) RETURNING id::text`,
      [jobId, JSON.stringify({ handle: target.username, watermarkId: before.highWatermarkId, floorMs: null, pass: before.passes + 1 }), newest],
    );
    const sliceId = await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    expect(sliceId).toBe(rows[0]!.id);
    const harvester = new Harvester(h.services, { concurrency: 2 });
    await harvester.start();
    let after = before;
    try {
      for (let i = 0; i < 100 && after.passes === before.passes; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = (await getWatch(h.services.pool, jobId))!;
      }
    } finally {
      await harvester.stop();
    }
    expect(after.passes).toBe(before.passes + 1);
    expect(after.highWatermarkId).toBe(newest);
  });

  it('a search whose range is empty (--since tomorrow) completes at once instead of waiting as queued forever', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: tomorrow } });
    const snap = await jobSnapshot(h.services.pool, jobId);
    expect({ status: snap?.status, note: snap?.note, requests: snap?.requests }).toEqual({
      status: 'completed', note: 'nothing to harvest: the planned range is empty', requests: 0,
    });
    const { rows } = await h.services.pool.query<{ type: string }>('SELECT type FROM outbox WHERE job_id = $1', [jobId]);
    expect(rows.map((r) => r.type)).toEqual(['job.completed']);
    // A watch with the same range is not ended: its passes come later.
    const watch = await h.submit({ kind: 'search', params: { query: 'lang:en', since: tomorrow, everySeconds: 3600 } });
    expect((await jobSnapshot(h.services.pool, watch))?.status).not.toBe('completed');
  });

  it('a search --until ahead of now is planned up to now, not into empty days', async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2099-01-01' } });
    const { rows } = await h.services.pool.query<{ until_ms: string }>(
      `SELECT max((params->>'untilMs')::bigint)::text AS until_ms FROM job_slices WHERE job_id = $1`,
      [jobId],
    );
    expect(Number(rows[0]!.until_ms)).toBeLessThanOrEqual(Date.now());
    expect(Number(rows[0]!.until_ms)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a job whose last slice ended while it was paused completes on resume', async () => {
    const jobId = await h.submit({ kind: 'community', params: { communityId: h.sim.world.communities[0]!.id } });
    const { rows } = await h.services.pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1', [jobId]);
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    await controlJob(deps, jobId, 'pause');
    // the pages in flight at the pause were the last (members and feed): they commit and end the slices
    for (const row of rows) {
      await commitPage(h.services.pool, {
        jobId, sliceId: row.id, expectedCursor: null, nextCursor: null, sliceDone: true, tweets: [], users: [], emptyPage: true,
      });
      await finishSlice(h.services.pool, { sliceId: row.id, jobId, status: 'done' });
    }
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('paused');
    expect(await controlJob(deps, jobId, 'resume')).toBe('completed');
  });

  it('splits exactly when created_at comes in the whole-second legacy form', async () => {
    h.sim.control.setQuirks({ legacyTimestamps: true });
    try {
      const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-01 until:2026-10-31');
      const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-10-31' } });
      const snap = await h.runUntil(jobId, { timeoutMs: 60_000 });
      expect(snap.status).toBe('completed');
      const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1 AND parent_id IS NOT NULL', [jobId]);
      expect(rows[0]!.n).toBeGreaterThan(0); // the walk did split
      expect(await jobTweetIds(h, jobId)).toEqual(expected);
    } finally {
      h.sim.control.setQuirks({ legacyTimestamps: false });
    }
  });

  it('one refused key (401) of two: the job carries on with the other and completes exactly', async () => {
    h.sim.control.removeKey('key-a');
    try {
      const expected = expectedSearchIds(h.sim.world, 'lang:es since:2026-10-01 until:2026-10-20');
      const jobId = await h.submit({ kind: 'search', params: { query: 'lang:es', since: '2026-10-01', until: '2026-10-20' } });
      const snap = await h.runUntil(jobId, { timeoutMs: 60_000 });
      expect(snap.status).toBe('completed');
      expect(await jobTweetIds(h, jobId)).toEqual(expected);
      const states = await h.services.gate.keyStates();
      expect(states.find((k) => k.fingerprint === keyFingerprint('key-a'))?.disabled).toBe(true);
    } finally {
      h.sim.control.addKey('key-a', 100_000);
    }
  });
});
