/**
 * Backfill → watch handoff: a watch started with --since backfills [since, now) in parallel
 * search slices (exact id ranges, see time-slices.ts), and its watermark starts at the id just
 * below `now`, the backfill's upper bound. The backfill's slices end at `max_id:` that id, the
 * watch's passes read what is above it: no gap and no overlap, whatever is posted meanwhile.
 */
import type { Queryable } from '../../store/db.ts';
import { backfillUpperBoundMs } from '../../store/watches.ts';
import type { PlanContext, SliceSpec } from '../kind.ts';
import { firstIdAtMs, splitRange, targetParallelism } from '../time-slices.ts';

/** Search slices over [since, ctx.now): a quarter of the target parallelism, as a search job starts. */
export function backfillSlices(query: string, since: string, ctx: PlanContext): SliceSpec[] {
  const initial = Math.ceil(targetParallelism(ctx.pooledRate, ctx.latencyMs) / 4);
  const ranges = splitRange({ sinceMs: Date.parse(`${since}T00:00:00Z`), untilMs: ctx.now.getTime() }, initial);
  return ranges.map((r) => ({ kind: 'search', params: { query, order: 'latest', sinceMs: r.sinceMs, untilMs: r.untilMs } }));
}

/** The watermark a watch starts from after its job's backfill slices (null: the job has none). */
export async function handoffWatermark(tx: Queryable, jobId: string): Promise<string | null> {
  const upper = await backfillUpperBoundMs(tx, jobId);
  return upper === null ? null : (firstIdAtMs(upper) - 1n).toString();
}
