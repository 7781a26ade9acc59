/**
 * The one gate every request passes (ARCHITECTURE invariant 2). The client calls `acquire` before
 * EVERY attempt it sends, retries included, and `report` after each attempt. The gate decides
 * which key is used: the Redis limiter pools several keys, each with its own rate and quota.
 */

export type RequestPriority = 'watch' | 'backfill';

export interface AcquireOptions {
  priority?: RequestPriority;
  /** Job whose --max-requests budget this request spends, if any. */
  jobId?: string;
  signal?: AbortSignal;
  /** This attempt repeats one that failed (429, 5xx): the gate serves it before first attempts. */
  retry?: boolean;
  /**
   * Pages the walk still expects after this request (an estimate, with `jobId`): of one job's
   * requests waiting in a process, the gate serves the one with the most left first, so the job's
   * walks end together. The job's place among other jobs' requests does not change.
   */
  remainingPages?: number;
}

export interface Grant {
  /** The API key to send; never logged, never stored outside the process. */
  readonly key: string;
  readonly fingerprint: string;
  /**
   * Local time (`localNow()`, epoch ms) after which the request must not go out: sent later, it could share one
   * of the service's one-second windows with more requests of its key than the rate allows. An
   * attempt that finds it passed sends nothing and gives the grant back (`giveBack`). Absent: no
   * limit (a gate with no shared schedule).
   */
  readonly sendBy?: number;
}

/** The same key without a send-by time: an attempt made with it is never late. */
export function withoutSendBy(grant: Grant): Grant {
  return { key: grant.key, fingerprint: grant.fingerprint };
}

/** How an attempt ended, as far as the gate cares. */
export interface AttemptOutcome {
  /** HTTP status, or 0 when no response arrived (transport failure). */
  status: number;
}

export interface RequestGate {
  /** Waits for a rate token and a quota unit on some key; throws when none can ever come. */
  acquire(options?: AcquireOptions): Promise<Grant>;
  /** 429 makes the key wait for the next window, 403/402 parks it, 401 disables it. */
  report(grant: Grant, outcome: AttemptOutcome): Promise<void>;
  /**
   * Returns what an unused grant spent (its key's quota unit, the job's budget unit); its rate slot
   * stays used. Required, so every wrapper of a gate has to pass it on.
   */
  giveBack(grant: Grant, options: { jobId?: string }): Promise<void>;
}

/**
 * The local clock that send-by times are in: epoch ms, but monotonic (an NTP step of the wall
 * clock while the process runs does not move it), so a grant's send-by time stays comparable.
 */
export function localNow(): number {
  return performance.timeOrigin + performance.now();
}
