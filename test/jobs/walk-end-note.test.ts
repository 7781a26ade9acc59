/**
 * A walk's last page commits its slice done; another walk's finishSlice may complete the job right
 * then, before this walk's own finishSlice. The note of what that last page found (an empty first
 * page: outage?) is on the job before the commit, so the job never ends without it.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { runSlice } from '../../src/jobs/slice-runner.ts';
import { commitPageAlone, type PageCommit } from '../../src/store/commit-page.ts';
import { finishSlice } from '../../src/store/job-runtime.ts';
import { useHarness } from '../helpers/harness.ts';
import { runnerDeps } from '../helpers/slice-runner.ts';

describe('the note of a walk that ends', () => {
  const h = useHarness();

  it('is on the job when another walk completes the job between this walk\'s last commit and its finish', async () => {
    const pool = h.services.pool;
    const community = [...h.sim.world.communities].sort((a, b) => b.members.length - a.members.length)[0]!;
    h.sim.control.setFaults({ emptyEndRate: 1 });
    try {
      const jobId = await h.submit({ kind: 'community', params: { communityId: community.id } });
      await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
      const { rows } = await pool.query<{ id: string; kind: string }>('SELECT id::text, kind FROM job_slices WHERE job_id = $1::bigint', [jobId]);
      const members = rows.find((r) => r.kind === 'community-members')!.id;
      const feed = rows.find((r) => r.kind === 'community-tweets')!.id;
      let noteAtCompletion: string | null | undefined;
      const deps = runnerDeps(h.services, {
        // The members walk's only page commits (its slice done); the feed's walk ends right then.
        commit: async (page: PageCommit) => {
          const committed = await commitPageAlone(pool, page);
          expect(await finishSlice(pool, { sliceId: feed, jobId, status: 'done' })).toBe('completed');
          noteAtCompletion = (await pool.query<{ note: string | null }>('SELECT note FROM jobs WHERE id = $1::bigint', [jobId])).rows[0]!.note;
          return committed;
        },
      });
      expect(await runSlice(members, deps)).toEqual({ kind: 'done' });
      expect(noteAtCompletion).toContain(`slice ${members}: the community's members: the first page was empty`);
      // Once, though the walk's finish comes after.
      const { rows: job } = await pool.query<{ note: string }>('SELECT note FROM jobs WHERE id = $1::bigint', [jobId]);
      expect(job[0]!.note.split("the community's members").length).toBe(2);
    } finally {
      h.sim.control.setFaults({ emptyEndRate: 0 });
    }
  });
});
