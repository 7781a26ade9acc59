/**
 * Walks that fetch their next page while this one commits (SliceHandler.fetchAhead: search here):
 * the next request reaches the service before the commit resolves, and the commit is told so
 * (waitsFor); a page fetched ahead that the walk will not commit (the commit ended the job, a
 * pause landed meanwhile, the commit threw) still has its request recorded, once; on shutdown a
 * page already fetched ahead is committed; and pages still commit one after another in cursor
 * order, to the exact set. A page fetched ahead asks the limiter with the walk's estimate of the
 * pages it has left, so a job's longest walks go first.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { runSlice, type SliceRunnerDeps } from '../../src/jobs/slice-runner.ts';
import { commitPageAlone, type PageCommit } from '../../src/store/commit-page.ts';
import type { CommitOptions } from '../../src/store/group-commit.ts';
import { StaleSliceError } from '../../src/store/errors.ts';
import { setJobControl } from '../../src/store/job-control.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { requestsRecorded, runnerDeps, withSearch } from '../helpers/slice-runner.ts';
import { getSlice } from '../helpers/store-rows.ts';
import { expectedSearchIds } from './ground-truth.ts';

const SEARCH = '/v3/search-tweets';
/** ~27 pages of the small world: one slice walks them in a couple of seconds at 20 requests/s. */
const QUERY = 'lang:fr';

/** One commit as the runner asked for it. */
interface SeenCommit {
  expectedCursor: string | null;
  nextCursor: string | null;
  waitsFor: boolean;
  tweetIds: string[];
  /** Search requests the simulator had served (since the walk began) when the commit resolved. */
  servedAtResolve: number;
}

describe('walks that fetch ahead of their commits', () => {
  const h = useHarness();

  const served = (): number => h.sim.control.requestLog().filter((r) => r.path === SEARCH).length;

  /** A search job of one slice (no date range), queued. */
  async function searchJob(params: Record<string, unknown> = {}): Promise<{ jobId: string; sliceId: string }> {
    const pool = h.services.pool;
    const jobId = await h.submit({ kind: 'search', params: { query: QUERY, ...params } });
    const { rows } = await pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1::bigint', [jobId]);
    expect(rows).toHaveLength(1);
    await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
    return { jobId, sliceId: rows[0]!.id };
  }

  const recorded = (jobId: string) => requestsRecorded(h.services.pool, jobId);

  async function until(condition: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }

  /**
   * A commit that lands alone, then, when the runner says it fetches meanwhile, holds its answer
   * until the simulator has served the next page (at most `holdMs`): the served count when it
   * resolves says whether the next request went out before the commit was done.
   */
  function watchingCommit(holdMs: number, before = () => 0): { seen: SeenCommit[]; commit: NonNullable<SliceRunnerDeps['commit']> } {
    const seen: SeenCommit[] = [];
    const commit = async (page: PageCommit, options?: CommitOptions) => {
      const index = seen.length;
      const entry: SeenCommit = {
        expectedCursor: page.expectedCursor,
        nextCursor: page.nextCursor,
        waitsFor: options?.waitsFor !== undefined,
        tweetIds: page.tweets.map((t) => t.id),
        servedAtResolve: -1,
      };
      seen.push(entry);
      const committed = await commitPageAlone(h.services.pool, page);
      if (entry.waitsFor) await until(() => served() - before() >= index + 2, holdMs);
      entry.servedAtResolve = served() - before();
      return committed;
    };
    return { seen, commit };
  }

  /**
   * Commits alone; the second commit pauses the job and lands once the page fetched ahead is in;
   * the third (that page, onto the paused slice) resumes the job before or after it is written.
   */
  function pausedThenResumed(jobId: string, resume: 'before' | 'after') {
    let commits = 0;
    const commit = async (page: PageCommit, options?: CommitOptions) => {
      commits++;
      if (commits === 2) {
        expect(await setJobControl(h.services.pool, jobId, 'pause')).not.toBeNull();
        await options?.waitsFor;
      }
      if (commits === 3 && resume === 'before') expect(await setJobControl(h.services.pool, jobId, 'resume')).not.toBeNull();
      const result = await commitPageAlone(h.services.pool, page);
      if (commits === 3 && resume === 'after') expect(await setJobControl(h.services.pool, jobId, 'resume')).not.toBeNull();
      return result;
    };
    return { commit, commits: () => commits };
  }

  it('the request for page N+1 reaches the service before page N commits; a shutdown still commits the page fetched ahead', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    const start = served();
    const { seen, commit } = watchingCommit(2000, () => start);
    const abort = new AbortController();
    let pages = 0;
    const outcome = await runSlice(
      sliceId,
      runnerDeps(h.services, {
        signal: abort.signal,
        commit,
        onPage: () => {
          if (++pages === 4) abort.abort();
        },
      }),
    );
    expect(outcome.kind).toBe('later');
    // Pages 1-4 each committed while the next one was fetched: N+1 served before N's commit resolved,
    // and only one page ahead (no page N+2 before page N+1 is in hand).
    expect(seen.slice(0, 4).map((c) => c.servedAtResolve)).toEqual([2, 3, 4, 5]);
    expect(seen.slice(0, 4).map((c) => c.waitsFor)).toEqual([true, true, true, true]);
    // The shutdown came after page 5 was fetched ahead: it is committed (its request was spent),
    // with nothing fetched behind it.
    expect(seen).toHaveLength(5);
    expect(seen[4]!.waitsFor).toBe(false);
    expect(served() - start).toBe(5);
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ pages: 5, cursor: seen[4]!.nextCursor });
    expect(await recorded(jobId)).toEqual({ logged: 5, spent: 5 });
  });

  it("a page fetched ahead tells the limiter its job and how many pages its walk still expects, down to none at the walk's end", { timeout: 20_000 }, async () => {
    const pool = h.services.pool;
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-10-31' } });
    const { rows } = await pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1::bigint ORDER BY id LIMIT 1', [jobId]);
    await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
    const asked: Array<{ jobId: string | undefined; remainingPages: number | undefined }> = [];
    const client = withSearch(h.services.client, (real) => (params, options) => {
      asked.push({ jobId: options?.jobId, remainingPages: options?.remainingPages });
      return real(params, options);
    });
    expect(await runSlice(rows[0]!.id, runnerDeps({ pool, client }))).toEqual({ kind: 'done' });
    // The first page is fetched with nothing known of the walk; the pages fetched ahead say, each
    // for the job it spends.
    expect(asked[0]!.remainingPages).toBeUndefined();
    expect(asked.every((a) => a.jobId === jobId)).toBe(true);
    const estimates = asked.flatMap((a) => (a.remainingPages === undefined ? [] : [a.remainingPages]));
    expect(estimates.length).toBeGreaterThanOrEqual(3);
    expect(estimates[0]!).toBeGreaterThan(estimates.at(-1)!);
    expect(estimates.at(-1)!).toBeLessThan(2);
  });

  it('a page that may reach --max-tweets fetches nothing ahead: the walk that stops there spends one request', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob({ maxTweets: 20 });
    const start = served();
    const { seen, commit } = watchingCommit(500, () => start);
    expect(await runSlice(sliceId, runnerDeps(h.services, { commit }))).toEqual({ kind: 'done' });
    expect(seen).toEqual([expect.objectContaining({ waitsFor: false })]);
    expect(served() - start).toBe(1);
    expect(await recorded(jobId)).toEqual({ logged: 1, spent: 1 });
    const { rows } = await h.services.pool.query<{ status: string; note: string | null }>('SELECT status, note FROM jobs WHERE id = $1::bigint', [jobId]);
    expect(rows[0]).toMatchObject({ status: 'completed', note: expect.stringMatching(/max-tweets 20/) });
  });

  it('a commit that ends the job (--max-tweets, reached by other slices meanwhile) still stores the page fetched ahead (sent, paid) and records its request once', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob({ maxTweets: 50 });
    const start = served();
    const watching = watchingCommit(2000, () => start);
    const seen = watching.seen;
    // While the first page commits, the job's other slices (simulated) bring it past the mark.
    const commit: NonNullable<SliceRunnerDeps['commit']> = async (page, options) => {
      if (seen.length === 0) await h.services.pool.query('UPDATE jobs SET tweets = tweets + 100 WHERE id = $1::bigint', [jobId]);
      return watching.commit(page, options);
    };
    expect(await runSlice(sliceId, runnerDeps(h.services, { commit }))).toEqual({ kind: 'done' });
    // The first page's commit found the mark reached; the second had been fetched while it
    // committed: paid for, it is committed too (it was dropped), and nothing more is fetched.
    expect(seen).toHaveLength(2);
    expect(seen[0]!.servedAtResolve).toBe(2);
    expect(seen[1]!.waitsFor).toBe(false);
    expect(served() - start).toBe(2);
    expect(await recorded(jobId)).toEqual({ logged: 2, spent: 2 });
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ pages: 2, cursor: seen[1]!.nextCursor, status: 'done' });
    // The job completed once that page had landed: its event counts it.
    const event = await h.services.pool.query<{ tweets: string; now: string }>(
      `SELECT o.payload->'data'->>'tweets' AS tweets, j.tweets::text AS now FROM outbox o JOIN jobs j ON j.id = o.job_id
        WHERE o.job_id = $1::bigint AND o.type = 'job.completed'`,
      [jobId],
    );
    expect(event.rows).toHaveLength(1);
    expect(event.rows[0]!.tweets).toBe(event.rows[0]!.now);
    const { rows } = await h.services.pool.query<{ status: string; note: string | null }>('SELECT status, note FROM jobs WHERE id = $1::bigint', [jobId]);
    expect(rows[0]!.status).toBe('completed');
    expect(rows[0]!.note).toMatch(/max-tweets 50/);
  });

  it('a pause that lands while a page commits: the page fetched ahead (sent, paid) is committed too, onto the paused slice', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    const start = served();
    const seen: PageCommit[] = [];
    const commit = async (page: PageCommit, options?: CommitOptions) => {
      seen.push(page);
      // The pause is taken while the next page is being fetched; the commit lands after it, once
      // that page has come back (so its request was sent: a drop before the grant sends none).
      if (seen.length === 2) {
        expect(options?.waitsFor).toBeDefined();
        expect(await setJobControl(h.services.pool, jobId, 'pause')).not.toBeNull();
        await options?.waitsFor;
      }
      return commitPageAlone(h.services.pool, page);
    };
    expect(await runSlice(sliceId, runnerDeps(h.services, { commit }))).toEqual({ kind: 'done' });
    // Pages 1 and 2 fetched and handed to commits, page 3 fetched ahead of page 2's commit and
    // committed after it; nothing fetched after the pause.
    expect(seen).toHaveLength(3);
    expect(seen[2]!.expectedCursor).toBe(seen[1]!.nextCursor);
    expect(served() - start).toBe(3);
    expect(await recorded(jobId)).toEqual({ logged: 3, spent: 3 });
    const { rows } = await h.services.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1::bigint', [jobId]);
    expect(rows[0]!.status).toBe('paused');
    // The slice waits at page 3's next cursor: a resume asks for page 4, not page 3 again.
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ status: 'pending', pages: 3, cursor: seen[2]!.nextCursor });
  });

  it('a resume that lands before the page fetched ahead commits: the walk goes on from it, to the exact set', { timeout: 30_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, QUERY);
    const { jobId, sliceId } = await searchJob();
    const start = served();
    // The resume comes while the walk finishes its pause: the queue entry is still this walk's.
    const { commit, commits } = pausedThenResumed(jobId, 'before');
    expect(await runSlice(sliceId, runnerDeps(h.services, { commit }))).toEqual({ kind: 'done' });
    expect(served() - start).toBe(commits());
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ status: 'done', pages: commits() });
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });

  it('a walk that finishes its pause after a resume runs again at once instead of waiting for a reconcile', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    // Resumed after the page fetched ahead committed onto the paused slice, before the walk returns.
    const { commit, commits } = pausedThenResumed(jobId, 'after');
    const outcome = await runSlice(sliceId, runnerDeps(h.services, { commit }));
    expect(outcome).toMatchObject({ kind: 'later' });
    expect(commits()).toBe(3);
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ status: 'pending', pages: 3 });
  });

  it('a commit that throws (a lost connection): the page fetched ahead is awaited and its request recorded', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    const start = served();
    const commit = async (_page: PageCommit, options?: CommitOptions): Promise<never> => {
      expect(options?.waitsFor).toBeDefined();
      // The connection is lost once the page fetched ahead has come back (its request was sent).
      await options?.waitsFor;
      throw new Error('connection terminated unexpectedly');
    };
    await expect(runSlice(sliceId, runnerDeps(h.services, { commit }))).rejects.toThrow(/connection terminated/);
    // The failed page and the one fetched ahead of its commit: both served, both recorded, once.
    expect(served() - start).toBe(2);
    expect(await recorded(jobId)).toEqual({ logged: 2, spent: 2 });
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ pages: 0, cursor: null });
  });

  it('the same failure after the run committed pages goes back to the queue uncounted (BullMQ attempts last the slice\'s life)', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    const start = served();
    let commits = 0;
    const commit = async (page: PageCommit, options?: CommitOptions) => {
      if (++commits === 3) {
        await options?.waitsFor;
        throw new Error('connection terminated unexpectedly');
      }
      return commitPageAlone(h.services.pool, page);
    };
    const outcome = await runSlice(sliceId, runnerDeps(h.services, { commit }));
    expect(outcome).toMatchObject({ kind: 'later' });
    expect((outcome as { atMs: number }).atMs).toBeGreaterThan(Date.now());
    // Two pages committed; the third failed, the fourth was fetched ahead of it: all recorded once.
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ pages: 2 });
    expect(served() - start).toBe(4);
    expect(await recorded(jobId)).toEqual({ logged: 4, spent: 4 });
  });

  it('a slice handed over while the worker shuts down is not taken: left pending, back to the queue, no request', async () => {
    const { sliceId } = await searchJob();
    const start = served();
    const abort = new AbortController();
    abort.abort();
    expect(await runSlice(sliceId, runnerDeps(h.services, { signal: abort.signal }))).toMatchObject({ kind: 'later' });
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ status: 'pending' });
    expect(served() - start).toBe(0);
  });

  it('a walk to its end commits every page in cursor order, each once, to the exact set', { timeout: 30_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, QUERY);
    const { jobId, sliceId } = await searchJob();
    const start = served();
    // Each commit resolves only once the next page is in: the walk always has a page fetched ahead.
    const { seen, commit } = watchingCommit(2000, () => start);
    expect(await runSlice(sliceId, runnerDeps(h.services, { commit }))).toEqual({ kind: 'done' });
    expect(seen.length).toBeGreaterThan(10);
    expect(seen[0]!.expectedCursor).toBeNull();
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.expectedCursor, `commit ${i}`).toBe(seen[i - 1]!.nextCursor);
    expect(seen.at(-1)!.nextCursor).toBeNull();
    // Each page is a different page: no tweet committed twice, and together they are the set.
    const committed = seen.flatMap((c) => c.tweetIds);
    expect(new Set(committed).size).toBe(committed.length);
    expect(committed.sort()).toEqual(expected);
    // Every page but the last was committed with its successor on the way.
    expect(seen.map((c) => c.waitsFor)).toEqual(seen.map((_, i) => i < seen.length - 1));
    // Each request served was committed as a page: nothing fetched ahead past the end, nothing twice.
    expect(served() - start).toBe(seen.length);
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ pages: seen.length, status: 'done' });
    expect(await recorded(jobId)).toEqual({ logged: seen.length, spent: seen.length });
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });

  it('a commit that landed but answered stale (its batch lost the COMMIT answer and re-ran page by page): the walk goes on, nothing fetched twice, the job completes', { timeout: 30_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, QUERY);
    const { jobId, sliceId } = await searchJob();
    const start = served();
    let commits = 0;
    let last = false;
    const commit = async (page: PageCommit) => {
      const committed = await commitPageAlone(h.services.pool, page);
      commits++;
      last = page.nextCursor === null;
      // The second page and the last one: written, then reported stale, as the re-run finds them.
      if (commits === 2 || last) throw new StaleSliceError(page.sliceId, page.expectedCursor);
      return committed;
    };
    expect(await runSlice(sliceId, runnerDeps(h.services, { commit }))).toEqual({ kind: 'done' });
    expect(last).toBe(true);
    // No page was requested again, none committed twice, and the job did not stay running.
    expect(served() - start).toBe(commits);
    expect(await getSlice(h.services.pool, sliceId)).toMatchObject({ pages: commits, status: 'done' });
    expect((await h.services.pool.query('SELECT status FROM jobs WHERE id = $1::bigint', [jobId])).rows[0]).toEqual({ status: 'completed' });
    expect(await recorded(jobId)).toEqual({ logged: commits, spent: commits });
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });
});

describe('a page fetched ahead that is dropped before its grant', () => {
  // One request a second: the page fetched ahead waits for its grant while the page before commits.
  const h = useHarness({ rate: 1 });
  const served = (): number => h.sim.control.requestLog().filter((r) => r.path === SEARCH).length;

  it('is never sent: a pause that lands while the page commits costs no request for the next one', { timeout: 20_000 }, async () => {
    const pool = h.services.pool;
    const jobId = await h.submit({ kind: 'search', params: { query: QUERY } });
    const { rows } = await pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1::bigint', [jobId]);
    await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
    const start = served();
    let committed = 0;
    const commit = async (page: PageCommit, options?: CommitOptions) => {
      expect(options?.waitsFor).toBeDefined();
      expect(await setJobControl(pool, jobId, 'pause')).not.toBeNull();
      const result = await commitPageAlone(pool, page);
      committed = performance.now();
      return result;
    };
    expect(await runSlice(rows[0]!.id, runnerDeps(h.services, { commit }))).toEqual({ kind: 'done' });
    // Dropped while it waited for the limiter: not sent, and the walk did not wait for its grant.
    expect(performance.now() - committed).toBeLessThan(500);
    expect(served() - start).toBe(1);
    expect(await requestsRecorded(pool, jobId)).toEqual({ logged: 1, spent: 1 });
  });
});
