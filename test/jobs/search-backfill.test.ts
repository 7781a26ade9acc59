import { describe, expect, it } from 'vitest';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { runCli } from '../helpers/cli.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('search backfill', () => {
  const h = useHarness();

  it('stores exactly the tweets the query matches over the date range, in parallel slices', async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-10-01 until:2026-10-15');
    expect(expected.length).toBeGreaterThan(100);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-15' } });
    const snap = await h.runUntil(jobId, { timeoutMs: 60_000 });
    expect(snap.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    expect(snap.tweets).toBe(expected.length);
    // ids above 2^53 arrive exact: they equal the simulator's own
    expect(expected.some((id) => BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER))).toBe(true);
    const slices = await h.services.pool.query('SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1', [jobId]);
    expect(slices.rows[0].n).toBeGreaterThan(1);
    // every request of the job is accounted for, and the simulator saw no 429
    const stats = h.sim.control.stats();
    expect(stats.byStatus['429'] ?? 0).toBe(0);
    const accounted = await h.services.pool.query('SELECT count(*)::int AS n FROM api_requests WHERE job_id = $1', [jobId]);
    expect(accounted.rows[0].n).toBe(snap.requests);
  });

  it('a sparse search with --max-requests within the threshold is sized by the probe: few slices, not one per parallel walk', async () => {
    const w = h.sim.world;
    const user = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && expectedSearchIds(w, `from:${u.username} since:2026-09-01 until:2026-10-31`).length === 3)!;
    const slicesOf = async (argv: string[]) => {
      const run = await runCli(argv, h.env);
      expect(run.code, run.err).toBe(0);
      const jobId = run.out.split('\n')[0]!;
      const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint', [jobId]);
      // Queued only: the next test's worker must not walk it.
      expect((await runCli(['cancel', jobId], h.env)).code).toBe(0);
      return rows[0]!.n;
    };
    const query = ['search', `from:${user.username}`, '--since', '2026-09-01', '--until', '2026-10-31', '--max-requests', '1000'];
    // With --yes nothing is probed: the plan's parallel walks, each a first page at least.
    const unprobed = await slicesOf([...query, '--yes']);
    expect(unprobed).toBeGreaterThan(1);
    // Without it the 4-request probe runs (no question is asked): one page expected, one slice.
    expect(await slicesOf(query)).toBe(1);
  });

  it('stops at --max-requests exactly', async () => {
    const searches = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets').length;
    const before = searches();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-10-31' }, maxRequests: 7 });
    const snap = await h.runUntil(jobId, { timeoutMs: 30_000 });
    expect(snap.status).toBe('completed');
    expect(snap.note).toMatch(/max-requests/);
    expect(searches() - before).toBe(7);
    // runUntil has stopped the worker, so a request still in flight when the job ended has been
    // accounted by now (its page was dropped, its request recorded).
    expect((await jobSnapshot(h.services.pool, jobId))?.requests).toBe(7);
  });

  it('stops at about --max-tweets: at least that many, over by at most the pages in flight', async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-10-31', maxTweets: 100 } });
    const snap = await h.runUntil(jobId, { timeoutMs: 30_000 });
    expect(snap.status).toBe('completed');
    expect(snap.note).toMatch(/max-tweets 100/);
    expect(snap.tweets).toBeGreaterThanOrEqual(100);
    // at most one page per slice walking at once (16) beyond the page that crossed the mark
    expect(snap.tweets).toBeLessThan(100 + 20 * 17);
    expect(snap.slices.pending + snap.slices.running).toBe(0);
  });

  it('fails with the service message on a 400', async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'min_faves:abc' } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('failed');
    expect(snap.errorCode).toBe('API_BAD_REQUEST');
    expect(snap.errorMessage).toMatch(/min_faves/);
  });
});
