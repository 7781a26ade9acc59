/**
 * Tells `harvest status` which jobs are waiting for rate: a gate decorator that, while an acquire
 * has been waiting longer than STAMP_AFTER_MS, stamps its job in a Redis sorted set. A job stamped
 * in the last two seconds is "waiting for rate".
 *
 * One sweep per process stamps each waiting job at most once a second, however many of its slices
 * wait: each acquire used to run a timer of its own and stamp on its own, and at one key's full
 * rate (16 slices, most of them always waiting) that was 306 ZADDs and 982 timers in a 676-page
 * job (issue 13: each Redis write ~0.2 ms on the bench machine). An acquire now costs a Set insert
 * and delete; the sweep's timer runs only while some acquire waits.
 */
import type { RedisConnection } from './redis-keys.ts';
import type { AcquireOptions, RequestGate } from '../api-client/gate.ts';

/** An acquire waiting longer than this marks its job as waiting for rate. */
const STAMP_AFTER_MS = 250;
const FRESH_MS = 2000;
/** How often the sweep looks at the waiting acquires: a job is stamped 250–500 ms into its wait. */
const SWEEP_MS = 250;
/** A job is stamped at most this often: with sweeps every 250 ms, a waiting job's stamp is at most 1.25 s old. */
const RESTAMP_MS = 1000;
/**
 * Stamps older than this go, and so does the key when nobody has stamped for this long: a job
 * stamped that long ago is not waiting now. The sweep prunes where it writes, since the readers
 * (status, the dashboard, the webhook stalled check) may never run on a worker nobody watches.
 */
const KEEP_MS = 60_000;

interface Waiting {
  readonly jobId: string;
  readonly since: number;
}

export class RateWaitTracker {
  readonly #redis: RedisConnection;
  readonly #key: string;
  readonly #waiting = new Set<Waiting>();
  /** jobId → when this process last stamped it (Date.now()). */
  readonly #stamped = new Map<string, number>();
  #sweep: NodeJS.Timeout | null = null;

  constructor(redis: RedisConnection, prefix: string) {
    this.#redis = redis;
    this.#key = `${prefix}:rate-wait`;
  }

  wrap(gate: RequestGate): RequestGate {
    return {
      acquire: async (options: AcquireOptions = {}) => {
        const jobId = options.jobId;
        if (jobId === undefined) return gate.acquire(options);
        const entry: Waiting = { jobId, since: Date.now() };
        this.#waiting.add(entry);
        this.#sweep ??= setInterval(() => this.#stampWaiting(), SWEEP_MS).unref();
        try {
          return await gate.acquire(options);
        } finally {
          this.#waiting.delete(entry);
          if (this.#waiting.size === 0 && this.#sweep) {
            clearInterval(this.#sweep);
            this.#sweep = null;
          }
        }
      },
      report: (grant, outcome) => gate.report(grant, outcome),
      giveBack: (grant, options) => gate.giveBack(grant, options),
    };
  }

  #stampWaiting(): void {
    const now = Date.now();
    const stamps: Array<number | string> = [];
    for (const w of this.#waiting) {
      if (now - w.since < STAMP_AFTER_MS) continue;
      if (now - (this.#stamped.get(w.jobId) ?? -Infinity) < RESTAMP_MS) continue;
      this.#stamped.set(w.jobId, now);
      stamps.push(now, w.jobId);
    }
    // One round trip a sweep whatever the number of jobs stamped (issue 13: Redis writes per grant).
    if (stamps.length > 0) {
      void this.#redis
        .multi()
        .zadd(this.#key, ...stamps)
        .zremrangebyscore(this.#key, '-inf', now - KEEP_MS)
        .pexpire(this.#key, KEEP_MS)
        .exec()
        .catch(() => undefined);
    }
    // Jobs no longer waiting: their last stamp has gone stale anyway.
    for (const [jobId, at] of this.#stamped) if (now - at >= FRESH_MS) this.#stamped.delete(jobId);
  }

  async waitingJobs(now = Date.now()): Promise<string[]> {
    await this.#redis.zremrangebyscore(this.#key, '-inf', now - KEEP_MS);
    return this.#redis.zrangebyscore(this.#key, now - FRESH_MS, '+inf');
  }
}
