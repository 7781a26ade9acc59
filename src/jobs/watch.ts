/**
 * A watch's scheduler tick: start the next pass unless one is still running (passes never
 * overlap), and make sure the active pass is queued (a no-op when it already is).
 */
import type { Pool } from '../store/db.ts';
import { startWatchPass } from '../store/watches.ts';
import { runRefreshTick } from './kinds/refresh.ts';
import type { HarvestQueues } from './queue.ts';
import { jobKind } from './registry.ts';

export async function runWatchTick(jobId: string, deps: { pool: Pool; queues: HarvestQueues }): Promise<string | null> {
  // A scheduled refresh starts a pass of many slices, chosen in Postgres: its own tick.
  const refreshed = await runRefreshTick(jobId, deps);
  if (refreshed !== undefined) return refreshed;
  const pass = await startWatchPass(deps.pool, jobId, (w) => {
    const kind = jobKind(w.jobKind);
    if (!kind.passSlice) throw new Error(`job kind ${kind.kind} has a watch but no passSlice`);
    return kind.passSlice(kind.params.parse(w.jobParams), {
      watermarkId: w.watermarkId,
      floorMs: w.floorMs,
      gaps: w.gaps,
      pass: w.passes + 1,
      now: new Date(),
      profileUserId: w.profileUserId,
    });
  });
  if (!pass) {
    // The watch ended (failed, cancelled, paused): its scheduler has nothing left to start.
    await deps.queues.unscheduleWatch(jobId);
    return null;
  }
  // On the queue its slice's priority names, the one reconcile checks: queued on another, it would
  // be queued again by reconcile and walked twice at once.
  await deps.queues.enqueueSlice(pass.priority, { jobId, sliceId: pass.sliceId });
  return pass.sliceId;
}
