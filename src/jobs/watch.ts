/**
 * A watch's scheduler tick: start the next pass unless one is still running (passes never
 * overlap), and make sure the active pass is queued (a no-op when it already is).
 */
import type { Pool } from '../store/db.ts';
import { startWatchPass } from '../store/watches.ts';
import { MentionsJobParams, passSlice } from './kinds/mentions.ts';
import type { HarvestQueues } from './queue.ts';

export async function runWatchTick(jobId: string, deps: { pool: Pool; queues: HarvestQueues }): Promise<string | null> {
  const pass = await startWatchPass(deps.pool, jobId, (w) => {
    const params = MentionsJobParams.parse(w.jobParams);
    return passSlice(params, w.watermarkId, w.passes + 1, new Date());
  });
  if (!pass) {
    // The watch ended (failed, cancelled, paused): its scheduler has nothing left to start.
    await deps.queues.unscheduleWatch(jobId);
    return null;
  }
  await deps.queues.enqueueSlice('watch', { jobId, sliceId: pass.sliceId });
  return pass.sliceId;
}
