import { describe, expect, it } from 'vitest';
import { runSlice } from '../../src/jobs/slice-runner.ts';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { runnerDeps, withCall } from '../helpers/slice-runner.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('mention watch', () => {
  const h = useHarness();

  const mentionCalls = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/mentions').length;

  it('first pass reads back to --since, later passes fetch only what is new, an idle pass costs one request', async () => {
    const w = h.sim.world;
    const target = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[0]!;
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600, since: '2026-09-01' } });
    const first = await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(first.status).toBe('scheduled');
    const firstIds = await jobTweetIds(h, jobId);
    expect(firstIds.length).toBeGreaterThan(20);

    // An idle pass: exactly one request.
    let calls = mentionCalls();
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    const idle = await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(idle.status).toBe('scheduled');
    expect(mentionCalls() - calls).toBe(1);
    expect(await jobTweetIds(h, jobId)).toEqual(firstIds);

    // New mentions arrive: the next pass stores exactly those and stops at the watermark.
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    const added = h.sim.control.addTweets(
      Array.from({ length: 25 }, (_, i) => ({ authorHandle: author.username, text: `hello @${target.username} number ${i}` })),
    );
    calls = mentionCalls();
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    const second = await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(second.status).toBe('scheduled');
    const after = await jobTweetIds(h, jobId);
    expect(after.length).toBe(firstIds.length + added.length);
    expect(mentionCalls() - calls).toBe(2); // 25 new = two pages of 20
    expect(second.watch?.passes).toBe(3);
  });

  it('a first pass asks from the day before its --since (the service\'s time zone is unknown) and stops at --since', async () => {
    const w = h.sim.world;
    const since = '2026-09-10';
    const target = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .map((u) => ({ u, ids: expectedSearchIds(w, `@${u.username} since:${since}`), dayBefore: expectedSearchIds(w, `@${u.username} since:2026-09-09 until:${since}`) }))
      .filter(({ ids, dayBefore }) => ids.length > 20 && dayBefore.length > 0)
      .sort((a, b) => a.ids.length - b.ids.length)[0]!;
    // A zone west of UTC reads since_date D from hours after UTC midnight: asking for D itself
    // left the mentions of D's first hours unanswered, and the pass ended complete.
    const asked: Array<string | undefined> = [];
    const client = withCall(h.services.client, 'mentions', (real) => (params, options) => {
      asked.push(params.sinceDate);
      return real(params, options);
    });
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.u.username, since, minReplies: 0 } });
    const { rows } = await h.services.pool.query<{ id: string }>("SELECT id::text FROM job_slices WHERE job_id = $1::bigint AND status = 'pending'", [jobId]);
    expect(await runSlice(rows[0]!.id, runnerDeps(h.services, { client }))).toEqual({ kind: 'done' });
    expect(new Set(asked)).toEqual(new Set(['2026-09-09']));
    // Exactly the mentions since --since: the page that crossed it held some of the day before,
    // which the pass was not asked for (they were stored and exported with the job).
    expect((await jobTweetIds(h, jobId)).sort()).toEqual([...target.ids].sort());
    // It stopped at the page that crossed --since: at most one page more than the mentions since.
    expect(asked.length).toBeLessThanOrEqual(Math.ceil(target.ids.length / 20) + 1);
  });

  it('two ticks at once start one pass (passes never overlap)', async () => {
    const w = h.sim.world;
    const target = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && w.mentionsOf(u.index).length > 3)!;
    // (--min-likes 0: an identity apart from the first test's schedule; one identity has one)
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600, minLikes: 0 } });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    const [a, b] = await Promise.all([
      runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues }),
      runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues }),
    ]);
    expect(a).toBe(b);
    const { rows } = await h.services.pool.query("SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1 AND status IN ('pending','running')", [jobId]);
    expect(rows[0].n).toBe(1);
  });
});
