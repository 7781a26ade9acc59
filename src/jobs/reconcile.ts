/**
 * Postgres is the record, Redis the schedule: this puts back into Redis everything Postgres says
 * should be runnable (budgets, slices, watch schedulers). Safe to run at any time and from any
 * number of processes: a budget is set where Redis has none or holds more than Postgres says is
 * left (a Redis restored from an older snapshot), never raised; a slice is queued only when no
 * BullMQ job holds it (active, waiting or delayed), and a scheduler only when it is missing (an
 * upsert of a live one would move its next tick).
 *
 * Order matters for the limiter's fail-closed check: budgets first, then the epoch that lets job
 * grants flow again, then the work that will ask for grants.
 */
import type { Pool } from '../store/db.ts';
import { jobBudgets, runnableSlices, unrolledEnds } from '../store/job-control.ts';
import { finishSlice, rollUpJob } from '../store/job-runtime.ts';
import { scheduledWatches } from '../store/watches.ts';
import type { HarvestQueues } from './queue.ts';

export interface ReconcileDeps {
  pool: Pool;
  queues: HarvestQueues;
  budgets: {
    setBudget(jobId: string, maxRequests: number): Promise<number>;
    /** Written after a full reconcile: the limiter grants to jobs only while it exists. */
    markReconciled?(): Promise<void>;
  };
}

export interface ReconcileResult {
  /** Runnable slices in Postgres. */
  slices: number;
  /** Of those, how many nothing held and were queued now. */
  requeued: number;
  watches: number;
  /** Watch schedulers that were missing and were added now. */
  rescheduled: number;
  /** Ends rolled up now that no walk would have rolled up (unrolledEnds). */
  rolledUp: number;
}

/** Reconciles every live job, or only `jobId` (then the epoch is left alone: other jobs were not restored). */
export async function reconcile(deps: ReconcileDeps, jobId?: string): Promise<ReconcileResult> {
  for (const b of await jobBudgets(deps.pool)) {
    if (jobId === undefined || b.jobId === jobId) await deps.budgets.setBudget(b.jobId, b.remaining);
  }
  if (jobId === undefined) await deps.budgets.markReconciled?.();
  const slices = await runnableSlices(deps.pool, jobId);
  let requeued = 0;
  for (const s of slices) {
    if (await deps.queues.ensureSliceQueued(s.priority, { jobId: s.jobId, sliceId: s.sliceId })) requeued++;
  }
  // Ends a walk committed and died before rolling up, with the queue entry that would have run
  // it again lost: without this the job stayed running for ever (and `--wait` with it).
  const ends = await unrolledEnds(deps.pool, jobId);
  for (const end of ends) {
    if (end.sliceId !== null) await finishSlice(deps.pool, { sliceId: end.sliceId, jobId: end.jobId, status: 'done' });
    else await rollUpJob(deps.pool, end.jobId);
  }
  const watches = await scheduledWatches(deps.pool, jobId);
  let rescheduled = 0;
  for (const w of watches) {
    if (await deps.queues.hasWatchSchedule(w.jobId)) continue;
    await deps.queues.scheduleWatch(w.jobId, w.everySeconds * 1000, w.nextDueAt);
    rescheduled++;
  }
  return { slices: slices.length, requeued, watches: watches.length, rescheduled, rolledUp: ends.length };
}
