/**
 * The deployment's share of the limiter: job budgets and the reconcile epoch. These are schedule
 * (Postgres holds the record; reconcile writes them back after a loss), read and written with
 * single-key commands; only the acquire script spends a budget or checks the epoch.
 */
import type { RedisConnection } from '../redis-keys.ts';
import type { LimiterLayout } from './key-layout.ts';

export class ScheduleKeys {
  readonly #redis: RedisConnection;
  readonly #layout: LimiterLayout;

  constructor(redis: RedisConnection, layout: LimiterLayout) {
    this.#redis = redis;
    this.#layout = layout;
  }

  /** Keeps an existing budget (a re-run of a stalled job must not refill it) unless `replace`. */
  async setBudget(jobId: string, maxRequests: number, replace: boolean): Promise<number> {
    const key = this.#layout.budget(jobId);
    const value = String(Math.max(0, Math.floor(maxRequests)));
    if (replace) await this.#redis.set(key, value);
    else await this.#redis.set(key, value, 'NX');
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
