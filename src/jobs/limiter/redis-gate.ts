/**
 * The shared per-key limiter: one RequestGate for every worker, process and machine, kept in Redis.
 * Each acquire is one Lua script (see lua.ts) that picks a key with a free rate slot, checks and
 * spends its quota and the job's budget, and honours watch priority, all in one atomic step.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AcquireOptions, AttemptOutcome, Grant, RequestGate } from '../../api-client/gate.ts';
import type { ApiKeyConfig } from '../../config.ts';
import { AbortedError, ConfigError } from '../../errors.ts';
import { silentLogger, type Logger } from '../../logger.ts';
import { sleep } from '../../sleep.ts';
import { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from './errors.ts';
import { defineLimiterScripts, type AcquireMode, type KeyRedisNames, type LimiterScripts } from './scripts.ts';

export interface RedisGateOptions {
  redis: Redis;
  /** Prefix of every limiter key in Redis, e.g. `${config.redisPrefix}:limiter`. */
  prefix: string;
  keys: readonly ApiKeyConfig[];
  /** Grants per key per second that the service allows. */
  ratePerKey: number;
  /** Quota units per key that backfills leave for watches. */
  watchReserve: number;
  /** Added to the one-second window against network jitter; default 25 ms. */
  headroomMs?: number;
  /** How long a key parked by 403/402 (without a known validUntil) waits for a recheck; default 10 min. */
  recheckMs?: number;
  logger?: Logger;
}

/** A grant plus when its rate slot opened, by the Redis clock (ms since the epoch). */
export interface RedisGrant extends Grant {
  readonly slotAt: number;
}

export interface KeyState {
  fingerprint: string;
  /** Quota units left, or null before the first usage sync. */
  remaining: number | null;
  parkedUntil: Date | null;
  disabled: boolean;
  /** Why the key is parked or disabled: 'quota' (403/402/spent) or 'auth' (401). */
  reason: string | null;
  granted: number;
  rateLimited: number;
}

export interface Usage {
  remaining: number;
  validUntil: Date | null;
}

export interface QuotaSyncResult {
  fingerprint: string;
  remaining: number | null;
  validUntil: Date | null;
  /** Why this key was not synced (parked, disabled, the usage call failed), or null. */
  error: unknown;
}

const DEFAULT_HEADROOM_MS = 25;
const DEFAULT_RECHECK_MS = 10 * 60_000;
/** Waiting loops poll at least this often, so aborts, unparks and new slots are seen quickly. */
const MAX_POLL_MS = 40;
/** A watch that stops polling (crashed process) blocks backfills for at most this long. */
const WAITER_TTL_MS = 1000;


export class RedisGate implements RequestGate {
  readonly #redis: Redis;
  readonly #scripts: LimiterScripts;
  readonly #prefix: string;
  readonly #secrets: ReadonlyMap<string, string>;
  readonly #names: readonly KeyRedisNames[];
  readonly #intervalMs: number;
  readonly #headroomMs: number;
  readonly #recheckMs: number;
  readonly #reserve: number;
  readonly #logger: Logger;
  readonly #warnedUnknown = new Set<string>();

  constructor(options: RedisGateOptions) {
    if (options.keys.length === 0) throw new ConfigError('the limiter needs at least one API key');
    if (!(options.ratePerKey > 0)) throw new ConfigError('ratePerKey must be positive');
    if (!(options.watchReserve >= 0)) throw new ConfigError('watchReserve must not be negative');
    this.#redis = options.redis;
    this.#scripts = defineLimiterScripts(options.redis);
    this.#prefix = options.prefix;
    this.#secrets = new Map(options.keys.map((k) => [k.fingerprint, k.key]));
    if (this.#secrets.size !== options.keys.length) throw new ConfigError('the same API key is configured twice');
    this.#names = options.keys.map((k) => ({
      fingerprint: k.fingerprint,
      state: `${options.prefix}:key:${k.fingerprint}`,
      quota: `${options.prefix}:quota:${k.fingerprint}`,
    }));
    this.#headroomMs = options.headroomMs ?? DEFAULT_HEADROOM_MS;
    this.#intervalMs = (1000 + this.#headroomMs) / options.ratePerKey;
    this.#recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
    this.#reserve = options.watchReserve;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'limiter' });
  }

  acquire(options: AcquireOptions = {}): Promise<RedisGrant> {
    const { priority = 'backfill', jobId, signal } = options;
    return this.#acquireWithCount(priority, this.#names, jobId, signal).then((r) => r.grant);
  }

  async report(grant: Grant, outcome: AttemptOutcome): Promise<void> {
    const { status } = outcome;
    if (status !== 429 && status !== 403 && status !== 402 && status !== 401) return;
    const names = this.#namesOf(grant.fingerprint);
    const until = await this.#scripts.report(names, status, this.#headroomMs, this.#recheckMs);
    const fingerprint = grant.fingerprint;
    if (status === 429) this.#logger.debug({ fingerprint, until }, 'key rate-limited by the service; cooling');
    else if (status === 401) this.#logger.error({ fingerprint }, 'key rejected (401): disabled until unparked');
    else this.#logger.warn({ fingerprint, status, until }, 'key out of quota: parked');
  }

  /**
   * Seeds each key's quota from a usage call made with a grant on that very key (the usage call
   * passes the gate like every request). Parked and disabled keys are skipped; their park ends in
   * a recheck anyway.
   */
  async syncQuota(fetchUsage: (grant: Grant) => Promise<Usage>): Promise<QuotaSyncResult[]> {
    const results: QuotaSyncResult[] = [];
    for (const names of this.#names) {
      const { fingerprint } = names;
      try {
        const { grant, grantedBefore } = await this.#acquireWithCount('sync', [names], undefined, undefined);
        const usage = await fetchUsage(grant);
        const remaining = await this.#scripts.syncQuota(names, usage.remaining, grantedBefore, usage.validUntil, this.#recheckMs);
        this.#warnedUnknown.delete(fingerprint);
        results.push({ fingerprint, remaining, validUntil: usage.validUntil, error: null });
      } catch (error) {
        this.#logger.warn({ fingerprint, err: error }, 'quota sync failed for a key');
        results.push({ fingerprint, remaining: null, validUntil: null, error });
      }
    }
    return results;
  }

  /**
   * Limits a job to `maxRequests` grants in total. An existing budget is kept (a re-run of a
   * stalled job must not refill it) unless `replace` is set. Returns the budget now remaining.
   */
  async setBudget(jobId: string, maxRequests: number, options: { replace?: boolean } = {}): Promise<number> {
    const key = this.#budgetKey(jobId);
    const value = String(Math.max(0, Math.floor(maxRequests)));
    if (options.replace) await this.#redis.set(key, value);
    else await this.#redis.set(key, value, 'NX');
    return (await this.budgetRemaining(jobId)) ?? 0;
  }

  /** Grants the job may still take, or null when it has no budget. */
  async budgetRemaining(jobId: string): Promise<number | null> {
    const value = await this.#redis.get(this.#budgetKey(jobId));
    return value === null ? null : Math.max(0, Number(value));
  }

  async unparkKey(fingerprint: string): Promise<void> {
    await this.#scripts.unpark(this.#namesOf(fingerprint));
    this.#logger.info({ fingerprint }, 'key unparked by request');
  }

  /** Sets a key's remaining quota; null makes it unknown again. */
  async setQuota(fingerprint: string, remaining: number | null): Promise<void> {
    await this.#scripts.setQuota(this.#namesOf(fingerprint), remaining);
  }

  async keyStates(): Promise<KeyState[]> {
    const pipeline = this.#redis.pipeline();
    pipeline.time();
    for (const names of this.#names) {
      pipeline.hmget(names.state, 'parkedUntil', 'disabled', 'reason', 'granted', 'rateLimited');
      pipeline.get(names.quota);
    }
    const replies = (await pipeline.exec()) ?? [];
    for (const [error] of replies) if (error) throw error;
    const time = replies[0]?.[1] as [string, string];
    const nowUs = Number(time[0]) * 1_000_000 + Number(time[1]);
    return this.#names.map((names, i) => {
      const [parked, disabled, reason, granted, rateLimited] = replies[1 + 2 * i]?.[1] as (string | null)[];
      const quota = replies[2 + 2 * i]?.[1] as string | null;
      const parkedUs = parked ? Number(parked) : null;
      const isDisabled = disabled === '1';
      const isParked = parkedUs !== null && parkedUs > nowUs;
      return {
        fingerprint: names.fingerprint,
        remaining: quota === null ? null : Number(quota),
        parkedUntil: isParked ? new Date(Math.ceil(parkedUs / 1000)) : null,
        disabled: isDisabled,
        reason: isDisabled || isParked ? (reason ?? null) : null,
        granted: Number(granted ?? 0),
        rateLimited: Number(rateLimited ?? 0),
      };
    });
  }

  async #acquireWithCount(
    mode: AcquireMode,
    names: readonly KeyRedisNames[],
    jobId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ grant: RedisGrant; grantedBefore: number }> {
    const waiter = randomUUID();
    const watchWaiting = `${this.#prefix}:watch-waiting`;
    let registered = false;
    try {
      for (;;) {
        if (signal?.aborted) throw new AbortedError();
        const reply = await this.#scripts.acquire({
          mode,
          waiter,
          watchWaiting,
          budget: jobId === undefined ? null : this.#budgetKey(jobId),
          keys: names,
          intervalMs: this.#intervalMs,
          lookaheadMs: this.#intervalMs / 2,
          reserve: this.#reserve,
          waiterTtlMs: WAITER_TTL_MS,
          recheckMs: this.#recheckMs,
        });
        switch (reply.kind) {
          case 'ok': {
            registered = false;
            const key = this.#secrets.get(reply.fingerprint);
            if (key === undefined) throw new Error(`limiter granted an unconfigured key ${reply.fingerprint}`);
            // The usage call that seeds the quota is itself granted while the quota is unknown.
            if (reply.quotaUnknown && mode !== 'sync') this.#warnUnknownQuota(reply.fingerprint);
            // The slot is ours and at most half an interval away: wait for it even when aborted,
            // so a grant that spent quota and budget is always handed out and used.
            if (reply.delayMs > 0) await sleep(Math.ceil(reply.delayMs), undefined);
            return { grant: { key, fingerprint: reply.fingerprint, slotAt: reply.slotAt }, grantedBefore: reply.grantedBefore };
          }
          case 'wait':
            registered = mode === 'watch';
            await sleep(Math.min(Math.max(Math.ceil(reply.waitMs), 1), MAX_POLL_MS), signal);
            break;
          case 'exhausted': {
            registered = false;
            // Rare path: tell "every key refused (401)" apart from "quota spent", since the
            // first fails jobs at once and the second only parks them.
            const states = await this.keyStates();
            if (states.length > 0 && states.every((st) => st.disabled)) throw new KeysRefusedError(states.map((st) => st.fingerprint));
            throw new QuotaExhaustedError(reply.retryAt);
          }
          case 'budget':
            registered = false;
            throw new BudgetExhaustedError(jobId ?? '');
        }
      }
    } finally {
      // An aborted watch must not hold backfills back until its entry expires.
      if (registered) await this.#redis.zrem(watchWaiting, waiter).catch(() => undefined);
    }
  }

  #warnUnknownQuota(fingerprint: string): void {
    if (this.#warnedUnknown.has(fingerprint)) return;
    this.#warnedUnknown.add(fingerprint);
    this.#logger.warn({ fingerprint }, 'granting on a key whose quota is unknown; call syncQuota to seed it');
  }

  #namesOf(fingerprint: string): KeyRedisNames {
    const names = this.#names.find((n) => n.fingerprint === fingerprint);
    if (!names) throw new ConfigError(`no configured API key has fingerprint ${fingerprint}`);
    return names;
  }

  #budgetKey(jobId: string): string {
    return `${this.#prefix}:budget:${jobId}`;
  }
}

export function createRedisGate(options: RedisGateOptions): RedisGate {
  return new RedisGate(options);
}
