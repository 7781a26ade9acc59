/**
 * The slice runner's guards around a failed page (review findings): a page whose commit fails for
 * any reason still has its requests recorded (once, even when the commit did land); a page fetched
 * again after a retry wait re-reads the slice first, so a cancel during the wait costs no request.
 */
import { describe, expect, it } from 'vitest';
import { TransientError } from '../../src/api-client/errors.ts';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { runSlice, type SliceRunnerDeps } from '../../src/jobs/slice-runner.ts';
import { commitPageAlone, type PageCommit } from '../../src/store/commit-page.ts';
import { markSliceRunning } from '../../src/store/job-runtime.ts';
import { setJobControl } from '../../src/store/job-control.ts';
import { useHarness } from '../helpers/harness.ts';
import { requestsRecorded, runnerDeps, withSearch } from '../helpers/slice-runner.ts';

const SEARCH = '/v3/search-tweets';

describe('slice runner guards', () => {
  const h = useHarness();

  async function searchJob(): Promise<{ jobId: string; sliceId: string }> {
    const pool = h.services.pool;
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:fr' } });
    const { rows } = await pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1::bigint', [jobId]);
    expect(rows).toHaveLength(1);
    await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
    return { jobId, sliceId: rows[0]!.id };
  }

  const deps = (overrides: Partial<SliceRunnerDeps>): SliceRunnerDeps => runnerDeps(h.services, overrides);

  const spent = (jobId: string) => requestsRecorded(h.services.pool, jobId);

  /** Resolves once the service has received `n` search requests since `from` (its log's length then). */
  async function searchesReceived(from: number, n: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (h.sim.control.requestLog().slice(from).filter((r) => r.path === SEARCH).length < n) {
      if (Date.now() > deadline) throw new Error(`the service did not receive ${n} searches`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  it('a commit that fails (not stale) still records the page request', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    const from = h.sim.control.requestLog().length;
    const commit = async (): Promise<never> => {
      // Fail once the next page's request, fetched ahead, has reached the service: it must be
      // recorded too (one still waiting for its grant would be cancelled instead, and cost nothing).
      await searchesReceived(from, 2);
      throw new Error('connection terminated unexpectedly');
    };
    await expect(runSlice(sliceId, deps({ commit }))).rejects.toThrow(/connection terminated/);
    // The page's request and the next page's, fetched ahead while the commit ran (then dropped).
    expect(await spent(jobId)).toEqual({ logged: 2, spent: 2 });
  });

  it('a commit that landed and then failed records its request once', { timeout: 20_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    const from = h.sim.control.requestLog().length;
    const commit = async (p: PageCommit): Promise<never> => {
      await commitPageAlone(h.services.pool, p);
      await searchesReceived(from, 2);
      throw new Error('connection terminated after COMMIT');
    };
    await expect(runSlice(sliceId, deps({ commit }))).rejects.toThrow(/after COMMIT/);
    // Once each: the page's request (committed with it, then offered again after the failure) and
    // the next page's, fetched ahead and dropped.
    expect(await spent(jobId)).toEqual({ logged: 2, spent: 2 });
  });

  it('a walk stopped while Postgres no longer answers still returns: putting its slice back is bounded', { timeout: 20_000 }, async () => {
    const { sliceId } = await searchJob();
    const stop = new AbortController();
    const client = withSearch(h.services.client, (search) => async (...args) => {
      stop.abort();
      return search(...args);
    });
    // The pool answers every statement but the stop's put-back, which never gets an answer.
    const real = h.services.pool;
    const pool = new Proxy(real, {
      get(target, property) {
        if (property === 'query') {
          return (text: unknown, ...rest: unknown[]) =>
            typeof text === 'string' && text.includes("SET status = 'pending'") ? new Promise(() => undefined) : real.query(text as string, ...(rest as [unknown[]]));
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const started = performance.now();
    expect(await runSlice(sliceId, deps({ client, pool, signal: stop.signal }))).toMatchObject({ kind: 'later' });
    expect(performance.now() - started).toBeLessThan(8_000);
  });

  it('a job cancelled while a failed page waits to be fetched again: no second fetch', { timeout: 30_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    let calls = 0;
    const client = withSearch(h.services.client, (search) => async (...args) => {
      calls += 1;
      if (calls > 1) return search(...args);
      // The page fails (it will be fetched again after a wait); the job is cancelled meanwhile.
      await setJobControl(h.services.pool, jobId, 'cancel');
      throw new TransientError({ endpoint: `POST ${SEARCH}`, keyFingerprint: 'fp', status: 503 });
    });
    expect(await runSlice(sliceId, deps({ client }))).toEqual({ kind: 'done' });
    expect(calls).toBe(1);
    const { rows } = await h.services.pool.query<{ status: string }>('SELECT status FROM job_slices WHERE id = $1::bigint', [sliceId]);
    expect(rows[0]!.status).toBe('cancelled');
  });

  it('a slice taken over while a failed page waits: the old walk fetches nothing more', { timeout: 30_000 }, async () => {
    const { jobId, sliceId } = await searchJob();
    let calls = 0;
    const client = withSearch(h.services.client, (search) => async (...args) => {
      calls += 1;
      if (calls > 1) return search(...args);
      expect(await markSliceRunning(h.services.pool, sliceId, jobId, 'newer-walk')).toBe(true);
      throw new TransientError({ endpoint: `POST ${SEARCH}`, keyFingerprint: 'fp', status: 503 });
    });
    expect(await runSlice(sliceId, deps({ client }))).toEqual({ kind: 'done' });
    expect(calls).toBe(1);
  });
});
