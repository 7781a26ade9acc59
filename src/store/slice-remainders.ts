/**
 * What each walking slice of a job still has ahead of it, for the runner's refill: when a slice
 * ends while others still have range left, the largest remainder is split so the job keeps its
 * parallelism to the last pages (slice-runner, the kind's SliceHandler.splitRemainder).
 */
import type { Queryable } from './db.ts';
import type { JobPriority } from './states.ts';

export interface WalkingSlice {
  id: string;
  kind: string;
  /** The queue its walks (and a slice split off it) run on. */
  priority: JobPriority;
  params: Record<string, unknown>;
  pages: number;
  /** Ids of the newest and oldest page tweets the slice committed (null before its first page). */
  newestTweetId: string | null;
  oldestTweetId: string | null;
  /** Pending and never taken by a walk (no lease yet): waiting for a free walker. */
  unstarted: boolean;
}

export async function walkingSlices(db: Queryable, jobId: string): Promise<WalkingSlice[]> {
  const { rows } = await db.query<{
    id: string;
    kind: string;
    priority: JobPriority;
    params: Record<string, unknown>;
    pages: number;
    newest: string | null;
    oldest: string | null;
    unstarted: boolean;
  }>(
    `SELECT id::text, kind, priority, params, pages::int, newest_tweet_id::text AS newest, oldest_tweet_id::text AS oldest,
            (status = 'pending' AND lease IS NULL) AS unstarted
       FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running') ORDER BY id`,
    [jobId],
  );
  return rows.map((r) => ({ id: r.id, kind: r.kind, priority: r.priority, params: r.params, pages: r.pages, newestTweetId: r.newest, oldestTweetId: r.oldest, unstarted: r.unstarted }));
}
