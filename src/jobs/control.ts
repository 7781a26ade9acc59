/** pause, resume and cancel: Postgres changes first, then the schedule follows. */
import { InputError } from '../errors.ts';
import type { Pool } from '../store/db.ts';
import { runnableSlices, setJobControl } from '../store/job-control.ts';
import { rollUpJob } from '../store/job-runtime.ts';
import type { HarvestQueues } from './queue.ts';
import { reconcile, type ReconcileDeps } from './reconcile.ts';

export async function controlJob(
  deps: ReconcileDeps & { pool: Pool; queues: HarvestQueues },
  jobId: string,
  action: 'pause' | 'resume' | 'cancel',
): Promise<string> {
  const before = action === 'resume' ? [] : await runnableSlices(deps.pool, jobId);
  const changed = await setJobControl(deps.pool, jobId, action);
  if (!changed) throw new InputError(`job ${jobId} cannot be ${action === 'pause' ? 'paused' : action === 'resume' ? 'resumed' : 'cancelled'} in its current state (or does not exist)`);
  if (action === 'resume') {
    await reconcile(deps, jobId);
    // The last slice may have committed its final page while the job was paused: with nothing
    // left to run, only a roll-up can end it.
    return rollUpJob(deps.pool, jobId);
  } else {
    if (changed.watch) await deps.queues.unscheduleWatch(jobId);
    // Running slices notice the status between pages; queued ones are removed now.
    for (const s of before) await deps.queues.removeSlice(s.priority, s.sliceId);
  }
  return changed.status;
}
