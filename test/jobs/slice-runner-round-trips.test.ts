/**
 * What a walk asks Postgres per page beyond its commit (issue 13, worker CPU): a search proposes a
 * split on most pages; while its job already walks its target parallelism, the runner counts the
 * job's slices at most once a second and never re-reads its slice for a split that did not happen.
 * A split that does happen still re-reads the slice (its bound moved).
 */
import { describe, expect, it } from 'vitest';
import { runSlice, type SliceRunnerDeps } from '../../src/jobs/slice-runner.ts';
import { FULL_JOB_MEMORY_MS } from '../../src/jobs/slice-split.ts';
import type { Pool } from '../../src/store/db.ts';
import { useHarness } from '../helpers/harness.ts';
import { oneSliceJob, runnerDeps } from '../helpers/slice-runner.ts';

const COUNT_SQL = /^SELECT count\(\*\)::int AS active/;
const SLICE_READ_SQL = /^SELECT s\.id::text, s\.job_id::text, s\.kind/;

describe('slice runner round trips per page', () => {
  const h = useHarness();

  /** The pool, with every `query` whose text matches one of `patterns` counted. */
  function countingPool(pool: Pool, patterns: Record<string, RegExp>): { pool: Pool; counts: Record<string, number> } {
    const counts: Record<string, number> = Object.fromEntries(Object.keys(patterns).map((k) => [k, 0]));
    const wrapped = new Proxy(pool, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property);
        if (property !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => {
          const text = typeof args[0] === 'string' ? args[0].trim() : '';
          for (const [name, re] of Object.entries(patterns)) if (re.test(text)) counts[name]!++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { pool: wrapped, counts };
  }

  const deps = (pool: Pool, overrides: Partial<SliceRunnerDeps>): SliceRunnerDeps => runnerDeps({ pool, client: h.services.client }, overrides);

  it('a job at its target parallelism: slices counted at most once a second, the slice never re-read per page', { timeout: 60_000 }, async () => {
    const { sliceId } = await oneSliceJob(h);
    const { pool, counts } = countingPool(h.services.pool, { count: COUNT_SQL, read: SLICE_READ_SQL });
    let pages = 0;
    let splits = 0;
    const started = performance.now();
    // Stop after 12 pages: enough to see a per-page query, few enough to stay quick.
    const abort = new AbortController();
    await runSlice(
      sliceId,
      deps(pool, {
        signal: abort.signal,
        onPage: () => {
          if (++pages >= 12) abort.abort();
        },
        onSplit: async () => {
          splits++;
        },
      }),
    );
    const seconds = (performance.now() - started) / FULL_JOB_MEMORY_MS;
    // The walk fetches a page ahead while one commits: one already sent at the abort is committed.
    expect(pages).toBeGreaterThanOrEqual(12);
    expect(pages).toBeLessThanOrEqual(13);
    expect(splits).toBe(0);
    // Two reads when the walk starts (before and after taking the lease), none per page.
    expect(counts.read).toBe(2);
    expect(counts.count).toBeGreaterThanOrEqual(1);
    expect(counts.count).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
  });

  it('a job below its target: the walk splits and re-reads its slice after the split', { timeout: 60_000 }, async () => {
    const { jobId, sliceId } = await oneSliceJob(h);
    const { pool, counts } = countingPool(h.services.pool, { count: COUNT_SQL, read: SLICE_READ_SQL });
    const children: string[] = [];
    const abort = new AbortController();
    let pages = 0;
    await runSlice(
      sliceId,
      deps(pool, {
        signal: abort.signal,
        targetParallelism: () => 2,
        onPage: () => {
          if (++pages >= 3) abort.abort();
        },
        onSplit: async (_job, child) => {
          children.push(child);
        },
      }),
    );
    expect(children).toHaveLength(1);
    const { rows } = await h.services.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
      [jobId],
    );
    expect(rows[0]!.n).toBe(2);
    // The start's two reads, then one after the split.
    expect(counts.read).toBe(3);
  });
});
