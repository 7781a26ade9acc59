/**
 * Why each walk ended (job_slices.end_reason, migration 0006): what `harvest audit` reads to tell
 * a range walked to the service's end of results from one stopped early, and what decides whether
 * a watch pass may move its watermark (watches.ts). A page that ends its walk writes the reason in
 * its own commit (commit-page.ts, guarded on cursor and lease); a decision that ends a walk without
 * a page records it just before, guarded on the walk's lease: a crash in between leaves a reason on
 * a slice that is still walking, which the next end overwrites.
 */
import type { Queryable } from './db.ts';

export const SliceEndReason = {
  /** The service ended the walk: no cursor. */
  END: 'end',
  /** The walk reached its bound: a watermark, a first pass's floor, a hand-over point. */
  BOUND: 'bound',
  EMPTY_PAGES: 'empty-pages',
  /** Pages kept coming with fresh cursors but no new id (HARVEST_MAX_STALE_PAGES). */
  STALE_PAGES: 'stale-pages',
  REPEATED_CURSOR: 'repeated-cursor',
  NOT_FOUND: 'not-found',
  FAILED: 'failed',
  BUDGET: 'budget',
  MAX_TWEETS: 'max-tweets',
} as const;
export type SliceEndReason = (typeof SliceEndReason)[keyof typeof SliceEndReason];

export function isCompleteEnd(reason: string | null): boolean {
  return reason === SliceEndReason.END || reason === SliceEndReason.BOUND;
}

/**
 * Records why a walk is ending, just before a decision that ends it without a page (a page that
 * ends its walk carries its reason in its commit: PageCommit.endReason). Only a slice still walking
 * takes it: one that the job's end (endJob) already ended keeps that reason. With `lease`, only
 * while the slice is still that walk's: a walk whose slice was taken over (stalled takeover) cannot
 * write over the new walk's reason.
 */
export async function recordSliceEnd(db: Queryable, sliceId: string, reason: SliceEndReason, lease?: string): Promise<void> {
  await db.query(
    `UPDATE job_slices SET end_reason = $2 WHERE id = $1::bigint AND status IN ('pending', 'running')
       AND ($3::text IS NULL OR lease IS NOT DISTINCT FROM $3::text)`,
    [sliceId, reason, lease ?? null],
  );
}
