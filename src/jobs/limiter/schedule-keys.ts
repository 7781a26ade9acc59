/**
 * The deployment's share of the limiter: job budgets and the reconcile epoch. These are schedule
 * (Postgres holds the record; reconcile writes them back after a loss), read and written with
 * single-key commands (a budget's lowering is a one-key script); only the acquire script spends a
 * budget or checks the epoch.
 */
import type { RedisConnection } from '../redis-keys.ts';
import type { LimiterLayout } from './key-layout.ts';

/**
 * How long a budget outlives its last write. Every worker's reconcile writes each live job's
 * budget every 30 s (and a resume before its job runs), so only an ended job's key lapses: kept
 * for ever, one per budgeted job, it also handed a later job 1 (a database recreated or restored
 * on this prefix) the old job 1's spent budget. A live key that lapsed anyway (no worker for a
 * day) costs a reconcile: a grant fails closed on a budget it expects (LimiterStateLostError).
 */
export const BUDGET_TTL_MS = 24 * 60 * 60 * 1000;

/** KEYS: budget. ARGV: value, TTL ms. Sets it when absent or above the value; renews its TTL. */
const SET_BUDGET_AT_MOST_LUA = `
local current = tonumber(redis.call('GET', KEYS[1]) or '')
if current == nil or current > tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

export class ScheduleKeys {
  readonly #redis: RedisConnection;
  readonly #layout: LimiterLayout;

  constructor(redis: RedisConnection, layout: LimiterLayout) {
    this.#redis = redis;
    this.#layout = layout;
  }

  /**
   * Never raises an existing budget (a re-run of a stalled job must not refill it) unless
   * `replace` (a job's submit, before its commit: a key under its id is an older job's; an audit
   * --repair), but lowers one above `maxRequests`: a reconcile passes what Postgres says is left
   * (max_requests − requests_spent), and Redis restored from a snapshot older than its last grants
   * (AOF everysec, RDB, an async replica) kept the larger, stale budget: a job of --max-requests 10
   * that had spent 8 got 10 more. Postgres lags Redis by the grants in flight, so the lower of the
   * two is right either way (one atomic script).
   */
  async setBudget(jobId: string, maxRequests: number, replace: boolean): Promise<number> {
    const key = this.#layout.budget(jobId);
    const value = String(Math.max(0, Math.floor(maxRequests)));
    if (replace) await this.#redis.set(key, value, 'PX', BUDGET_TTL_MS);
    else await this.#redis.eval(SET_BUDGET_AT_MOST_LUA, 1, key, value, String(BUDGET_TTL_MS));
    return (await this.budgetRemaining(jobId)) ?? 0;
  }

  async budgetRemaining(jobId: string): Promise<number | null> {
    const value = await this.#redis.get(this.#layout.budget(jobId));
    return value === null ? null : Math.max(0, Number(value));
  }

  async markReconciled(): Promise<void> {
    await this.#redis.set(this.#layout.epoch, new Date().toISOString(), 'NX');
  }

  async isReconciled(): Promise<boolean> {
    return (await this.#redis.exists(this.#layout.epoch)) === 1;
  }
}
