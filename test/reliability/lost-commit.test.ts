/**
 * Recovery after a Postgres crash (issue #11, item 9). Page commits are asynchronous
 * (synchronous_commit = off), so a crash can lose the last pages together with their cursors.
 * Restarting the shared Postgres is not possible here, so the loss is made by hand between two
 * pages of a real run: the slice row goes back to what it was two pages earlier and those pages'
 * provenance rows go away, as a crash would leave them. The walk's next commit then finds a cursor
 * older than the one it holds; it must continue from the committed one, and the exact set arrives.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { runSlice } from '../../src/jobs/slice-runner.ts';
import { commitPageAlone, type CommittedPage, type PageCommit } from '../../src/store/commit-page.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { runnerDeps, withSearch } from '../helpers/slice-runner.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';

interface SliceState {
  cursor: string | null;
  recent_cursors: string[];
  pages: string;
  empty_pages: number;
  stale_pages: number;
}

describe('commits lost to a Postgres crash', () => {
  const h = useHarness();

  it('the next commit finds an older cursor: the walk continues from it, re-reads the lost pages, exact set', { timeout: 30_000 }, async () => {
    const pool = h.services.pool;
    const expected = expectedSearchIds(h.sim.world, 'lang:fr');
    expect(expected.length).toBeGreaterThan(200);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:fr' } });
    const { rows: slices } = await pool.query<{ id: string }>('SELECT id::text FROM job_slices WHERE job_id = $1::bigint', [jobId]);
    expect(slices).toHaveLength(1);
    const sliceId = slices[0]!.id;
    // No worker runs here: restore the limiter's epoch as a worker's start would.
    await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });

    // After each commit: the slice row as committed, and the ids the page brought. Taken in the
    // commit (not before each fetch): a walk fetches its next page while the last one commits.
    const after: SliceState[] = [];
    const committedIds: string[][] = [];
    let lost = false;
    const lose = async (): Promise<void> => {
      // Pages 3 and 4 were committed asynchronously and the crash lost them: the slice is back
      // where it was after page 2, and what pages 3 and 4 recorded for the job is gone.
      const at = after[1]!;
      const gone = [...committedIds[2]!, ...committedIds[3]!];
      await pool.query(
        `UPDATE job_slices SET cursor = $2, recent_cursors = $3::text[], pages = $4::bigint, empty_pages = $5, stale_pages = $6
          WHERE id = $1::bigint`,
        [sliceId, at.cursor, at.recent_cursors, at.pages, at.empty_pages, at.stale_pages],
      );
      const removed = await pool.query('DELETE FROM job_tweets WHERE job_id = $1::bigint AND tweet_id = ANY($2::bigint[])', [jobId, gone]);
      await pool.query('UPDATE jobs SET tweets = tweets - $2::bigint WHERE id = $1::bigint', [jobId, removed.rowCount ?? 0]);
      lost = true;
    };
    const commit = async (page: PageCommit): Promise<CommittedPage> => {
      const committed = await commitPageAlone(pool, page);
      const { rows } = await pool.query<SliceState>(
        'SELECT cursor, recent_cursors, pages::text, empty_pages, stale_pages FROM job_slices WHERE id = $1::bigint',
        [sliceId],
      );
      after.push(rows[0]!);
      committedIds.push(page.tweets.map((t) => t.id));
      if (after.length === 4 && !lost) await lose();
      return committed;
    };
    const fetchedIds: string[][] = [];
    const client = withSearch(h.services.client, (search) => async (...args) => {
      const page = await search(...args);
      fetchedIds.push(page.items.map((t) => t.id));
      return page;
    });
    const deps = runnerDeps({ pool, client }, { commit });

    expect(await runSlice(sliceId, deps)).toEqual({ kind: 'done' });
    expect(lost).toBe(true);
    const { rows } = await pool.query<{ status: string; pages: string }>('SELECT status, pages::text FROM job_slices WHERE id = $1::bigint', [sliceId]);
    expect(rows[0]!.status).toBe('done');
    // Every page once, plus page 5 (its commit met the older cursor), pages 3 and 4 again, and
    // page 6 when its fetch, started ahead while page 5 committed, had already been sent (one
    // still waiting for its grant is cancelled and fetches nothing).
    const extra = fetchedIds.length - Number(rows[0]!.pages);
    expect(extra).toBeGreaterThanOrEqual(3);
    expect(extra).toBeLessThanOrEqual(4);
    // Page 3 was read again after the loss.
    expect(fetchedIds.slice(5)).toContainEqual(committedIds[2]);
    expect((await jobSnapshot(pool, jobId))?.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });
});
