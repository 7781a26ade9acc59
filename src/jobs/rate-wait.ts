/**
 * Tells `harvest status` which jobs are waiting for rate: a gate decorator that, while an acquire
 * has been waiting longer than a token interval, stamps its job in a Redis sorted set once a
 * second. A job stamped in the last two seconds is "waiting for rate". Nothing is written for
 * acquires that are granted quickly, so the hot path costs one timer.
 */
import type { RedisConnection } from './redis-keys.ts';
import type { AcquireOptions, RequestGate } from '../api-client/gate.ts';

const STAMP_AFTER_MS = 250;
const FRESH_MS = 2000;

export class RateWaitTracker {
  readonly #redis: RedisConnection;
  readonly #key: string;

  constructor(redis: RedisConnection, prefix: string) {
    this.#redis = redis;
    this.#key = `${prefix}:rate-wait`;
  }

  wrap(gate: RequestGate): RequestGate {
    return {
      acquire: async (options: AcquireOptions = {}) => {
        const jobId = options.jobId;
        if (jobId === undefined) return gate.acquire(options);
        const stamp = () => void this.#redis.zadd(this.#key, Date.now(), jobId).catch(() => undefined);
        let interval: NodeJS.Timeout | undefined;
        const first = setTimeout(() => {
          stamp();
          interval = setInterval(stamp, 1000);
        }, STAMP_AFTER_MS);
        try {
          return await gate.acquire(options);
        } finally {
          clearTimeout(first);
          if (interval) clearInterval(interval);
        }
      },
      report: (grant, outcome) => gate.report(grant, outcome),
    };
  }

  async waitingJobs(now = Date.now()): Promise<string[]> {
    await this.#redis.zremrangebyscore(this.#key, '-inf', now - 60_000);
    return this.#redis.zrangebyscore(this.#key, now - FRESH_MS, '+inf');
  }
}
