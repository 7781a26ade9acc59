/**
 * Whole-job utilization (issue 13): a search backfill is planned at its target parallelism, and
 * when a slice ends while the job walks fewer slices than that, the runner splits the largest
 * remainder among the job's other walking slices, so parallelism holds to the last pages.
 */
import { describe, expect, it } from 'vitest';
import { searchJob } from '../../src/jobs/kinds/search.ts';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { runSlice, type SliceRunnerDeps } from '../../src/jobs/slice-runner.ts';
import { firstIdAtMs, targetParallelism } from '../../src/jobs/time-slices.ts';
import { silentLogger } from '../../src/logger.ts';
import { useHarness } from '../helpers/harness.ts';

const HOUR = 3_600_000;

describe('search backfill parallelism', () => {
  const h = useHarness();

  it('plans rate × latency slices from the start, not a quarter of them', () => {
    const specs = searchJob.plan(
      { query: 'lang:en', order: 'latest', since: '2026-10-01', until: '2026-10-15' },
      { pooledRate: 60, latencyMs: 550, now: new Date('2026-11-01T00:00:00Z') },
    );
    expect(specs).toHaveLength(targetParallelism(60, 550));
  });

  it('a slice that ends splits the largest remainder of the job, and queues the new slice', { timeout: 30_000 }, async () => {
    const pool = h.services.pool;
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-15' } });
    await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
    const { rows } = await pool.query<{ id: string; since: string; until: string }>(
      `SELECT id::text, params->>'sinceMs' AS since, params->>'untilMs' AS until FROM job_slices WHERE job_id = $1::bigint ORDER BY (params->>'sinceMs')::bigint`,
      [jobId],
    );
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const [ending, small, large] = [rows[0]!, rows[1]!, rows.at(-1)!];
    // Only three slices still walk: one about to end (a one-minute range), two with progress.
    await pool.query(`UPDATE job_slices SET status = 'done' WHERE job_id = $1::bigint AND id <> ALL($2::bigint[])`, [jobId, [ending.id, small.id, large.id]]);
    await pool.query(`UPDATE job_slices SET params = params || jsonb_build_object('untilMs', (params->>'sinceMs')::bigint + 60000) WHERE id = $1::bigint`, [ending.id]);
    const progress = async (slice: { id: string; until: string }, walkedMs: number) => {
      const newest = firstIdAtMs(Number(slice.until) - HOUR / 60);
      const oldest = firstIdAtMs(Number(slice.until) - walkedMs);
      await pool.query(
        `UPDATE job_slices SET status = 'running', pages = 1, newest_tweet_id = $2::bigint, oldest_tweet_id = $3::bigint WHERE id = $1::bigint`,
        [slice.id, newest.toString(), oldest.toString()],
      );
    };
    // The small one has walked nearly all of its range; the large one one hour of it.
    await progress(small, Number(small.until) - Number(small.since) - HOUR);
    await progress(large, HOUR);

    const queued: string[] = [];
    const deps: SliceRunnerDeps = {
      pool,
      client: h.services.client,
      logger: silentLogger,
      signal: new AbortController().signal,
      quotaRecheckMs: 600_000,
      targetParallelism: () => 8,
      onSplit: async (_job, sliceId) => {
        queued.push(sliceId);
      },
    };
    expect(await runSlice(ending.id, deps)).toEqual({ kind: 'done' });

    const after = await pool.query<{ id: string; parent: string | null; stop: string | null; since: string; until: string }>(
      `SELECT id::text, parent_id::text AS parent, params->>'stopBelowMs' AS stop, params->>'sinceMs' AS since, params->>'untilMs' AS until
         FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running') ORDER BY id`,
      [jobId],
    );
    const child = after.rows.find((r) => r.parent !== null);
    expect(child?.parent).toBe(large.id);
    expect(queued).toEqual([child!.id]);
    const parent = after.rows.find((r) => r.id === large.id)!;
    // The child takes [since, stopBelowMs) of the large slice's remainder; nothing between is lost.
    expect(child!.since).toBe(large.since);
    expect(child!.until).toBe(parent.stop);
    expect(Number(parent.stop)).toBeLessThan(Number(large.until) - HOUR);
    expect(after.rows.find((r) => r.id === small.id)?.stop).toBeNull();
  });
});
