/**
 * Why each walk ended (job_slices.end_reason, migration 0006): what `harvest audit` reads to tell
 * a range walked to the service's end of results from one stopped early, and what decides whether
 * a watch pass may move its watermark (watches.ts). The runner records the reason just before the
 * page or decision that ends the slice: a crash in between leaves a reason on a slice that is
 * still walking, which the next end overwrites.
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
 * Records why a walk is ending, just before the commit or decision that ends it. Only a slice
 * still walking takes it: one that the job's end (endJob) already ended keeps that reason, even
 * when this walk's last page was fetched before and its commit is then refused as stale.
 */
export async function recordSliceEnd(db: Queryable, sliceId: string, reason: SliceEndReason): Promise<void> {
  await db.query(`UPDATE job_slices SET end_reason = $2 WHERE id = $1::bigint AND status IN ('pending', 'running')`, [sliceId, reason]);
}
