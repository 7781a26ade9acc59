/**
 * Postgres is the record, Redis the schedule: this puts back into Redis everything Postgres says
 * should be runnable (slices, watch schedulers, request budgets). Safe to run at any time and from
 * any number of processes: queue adds are idempotent by slice id, schedulers are upserts, and
 * budgets are only set where Redis has none.
 */
import type { Pool } from '../store/db.ts';
import { jobBudgets, runnableSlices } from '../store/job-control.ts';
import { scheduledWatches } from '../store/watches.ts';
import type { HarvestQueues } from './queue.ts';

export interface ReconcileDeps {
  pool: Pool;
  queues: HarvestQueues;
  budgets: { setBudget(jobId: string, maxRequests: number): Promise<number> };
}

export async function reconcile(deps: ReconcileDeps, jobId?: string): Promise<{ slices: number; watches: number }> {
  for (const b of await jobBudgets(deps.pool)) {
    if (jobId === undefined || b.jobId === jobId) await deps.budgets.setBudget(b.jobId, b.remaining);
  }
  const slices = await runnableSlices(deps.pool, jobId);
  for (const s of slices) await deps.queues.enqueueSlice(s.priority, { jobId: s.jobId, sliceId: s.sliceId });
  const watches = await scheduledWatches(deps.pool, jobId);
  for (const w of watches) await deps.queues.scheduleWatch(w.jobId, w.everySeconds * 1000);
  return { slices: slices.length, watches: watches.length };
}
