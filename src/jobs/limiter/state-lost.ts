/**
 * The limiter's fail-closed refusal (ARCHITECTURE invariant 3). Kept apart from errors.ts, which
 * holds the errors that end or park a job; this one only sends the work back to the queue.
 */
import { AppError, ErrorCode } from '../../errors.ts';

/**
 * Redis no longer holds what a reconcile from Postgres put there: the deployment's epoch key is
 * gone (FLUSHDB, failover to an empty replica), or a job that has a budget in Postgres has none in
 * Redis. Granting now could overspend the budget, so nothing is granted to the job until a
 * reconcile has restored it; the slice is re-queued (transient), never failed.
 */
export class LimiterStateLostError extends AppError {
  readonly jobId: string;
  /** What was missing: the epoch key or the job's budget key. */
  readonly missing: 'epoch' | 'budget';

  constructor(jobId: string, missing: 'epoch' | 'budget') {
    super(
      ErrorCode.LIMITER_STATE_LOST,
      missing === 'epoch'
        ? `Redis lost the schedule (no reconcile epoch): no grant for job ${jobId} until a reconcile`
        : `job ${jobId} has a budget in Postgres but none in Redis: no grant until a reconcile`,
    );
    this.jobId = jobId;
    this.missing = missing;
  }
}
