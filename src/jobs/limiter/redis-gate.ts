/**
 * The shared per-key limiter: one RequestGate for every worker, process and machine, kept in Redis.
 * Each acquire is one Lua script (see lua.ts) that picks a key with a free rate slot, checks and
 * spends its quota and the job's budget, and honours watch priority, all in one atomic step.
 * Key state lives in one namespace per service that every deployment on this Redis shares; budgets
 * and the reconcile epoch live under the deployment's prefix.
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
import { DEFAULT_KEY_NAMESPACE } from './namespace.ts';
import { LimiterStateLostError } from './state-lost.ts';
import { UNKNOWN_SYNC_BACKOFF_MS, UnknownQuotaSyncs } from './unknown-quota.ts';

export interface RedisGateOptions {
  redis: Redis;
  /** Prefix of the deployment's limiter keys (budgets, epoch, watch waiters), e.g. `${config.redisPrefix}:limiter`. */
  prefix: string;
  /** Namespace of per-key state (rate, cooling, quota), shared across prefixes; default `harvest-limiter`. */
  keyNamespace?: string;
  keys: readonly ApiKeyConfig[];
  /** Grants per key per second that the service allows. */
  ratePerKey: number;
  /** Quota units per key that backfills leave for watches. */
  watchReserve: number;
  /** Added to the one-second window against network jitter; default 25 ms. */
  headroomMs?: number;
  /** The headroom doubles per consecutive 429 on a key up to this; default 1000 ms. */
  headroomCapMs?: number;
  /** How long a key parked by 403/402 (without a known validUntil) waits for a recheck; default 10 min. */
  recheckMs?: number;
  logger?: Logger;
  /**
   * Fail closed after a Redis loss (ARCHITECTURE invariant 3). When given, an acquire for a job
   * is refused with LimiterStateLostError while the deployment's epoch key (written by
   * `markReconciled`) is missing, or while the job has a budget in Postgres (`budgetExpected`)
   * and none in Redis; `onStateLost` listeners hear of it.
   */
  schedule?: { budgetExpected(jobId: string): Promise<boolean> };
}

/** Asks the service how much quota a key has left, with a grant already taken on that key. */
export type FetchUsage = (grant: Grant) => Promise<Usage>;

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
const DEFAULT_HEADROOM_CAP_MS = 1000;
const DEFAULT_RECHECK_MS = 10 * 60_000;
/** Shared key state expires after a day unused: a namespace outlives deployments, not forever. */
const STATE_TTL_MS = 24 * 3_600_000;

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
  readonly #ratePerKey: number;
  readonly #intervalMs: number;
  readonly #headroomMs: number;
  readonly #headroomCapMs: number;
  readonly #recheckMs: number;
  readonly #reserve: number;
  readonly #logger: Logger;
  readonly #warnedUnknown = new Set<string>();
  readonly #schedule: RedisGateOptions['schedule'] | null;
  /** jobId → whether it has a budget; max_requests never changes once a job exists. */
  readonly #budgeted = new Map<string, boolean>();
  readonly #lostListeners = new Set<(error: LimiterStateLostError) => void>();
  #usageSource: FetchUsage | null = null;
  readonly #unknownSyncs = new UnknownQuotaSyncs();

  constructor(options: RedisGateOptions) {
    if (options.keys.length === 0) throw new ConfigError('the limiter needs at least one API key');
    if (!(options.ratePerKey > 0)) throw new ConfigError('ratePerKey must be positive');
    if (!(options.watchReserve >= 0)) throw new ConfigError('watchReserve must not be negative');
    this.#redis = options.redis;
    this.#scripts = defineLimiterScripts(options.redis);
    this.#prefix = options.prefix;
    this.#secrets = new Map(options.keys.map((k) => [k.fingerprint, k.key]));
    if (this.#secrets.size !== options.keys.length) throw new ConfigError('the same API key is configured twice');
    const ns = options.keyNamespace ?? DEFAULT_KEY_NAMESPACE;
    this.#names = options.keys.map((k) => ({
      fingerprint: k.fingerprint,
      state: `${ns}:key:${k.fingerprint}`,
      quota: `${ns}:quota:${k.fingerprint}`,
    }));
    this.#ratePerKey = options.ratePerKey;
    this.#headroomMs = options.headroomMs ?? DEFAULT_HEADROOM_MS;
    this.#headroomCapMs = options.headroomCapMs ?? DEFAULT_HEADROOM_CAP_MS;
    this.#schedule = options.schedule ?? null;
    this.#intervalMs = (1000 + this.#headroomMs) / options.ratePerKey;
    this.#recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
    this.#reserve = options.watchReserve;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'limiter' });
  }

  acquire(options: AcquireOptions = {}): Promise<RedisGrant> {
    const { priority = 'backfill', jobId, signal } = options;
    return this.#acquireWithCount(priority, this.#names, jobId, signal).then((r) => r.grant);
  }

  async #budgetExpected(jobId: string): Promise<boolean> {
    const known = this.#budgeted.get(jobId);
    if (known !== undefined) return known;
    const expected = await this.#schedule!.budgetExpected(jobId);
    this.#budgeted.set(jobId, expected);
    return expected;
  }

  /** Every answer is reported: a 429 cools the key and widens its headroom, a clean one narrows it back. */
  async report(grant: Grant, outcome: AttemptOutcome): Promise<void> {
    const { status } = outcome;
    if (status === 0) return;
    const names = this.#namesOf(grant.fingerprint);
    const until = await this.#scripts.report(names, status, this.#headroomMs, this.#recheckMs, this.#headroomCapMs);
    const fingerprint = grant.fingerprint;
    if (status === 429) this.#logger.debug({ fingerprint, until }, 'key rate-limited by the service; cooling');
    else if (status === 401) this.#logger.error({ fingerprint }, 'key rejected (401): disabled until unparked');
    else if (status === 403 || status === 402) this.#logger.warn({ fingerprint, status, until }, 'key out of quota: parked');
  }

  /** Where the gate asks for a key's quota when a backfill finds it unknown (set once the client exists). */
  setUsageSource(fetchUsage: FetchUsage): void {
    this.#usageSource = fetchUsage;
  }

  /** Hears of every fail-closed refusal (a reconcile should follow); returns the unsubscriber. */
  onStateLost(listener: (error: LimiterStateLostError) => void): () => void {
    this.#lostListeners.add(listener);
    return () => this.#lostListeners.delete(listener);
  }

  /** Called by reconcile once budgets are back: job grants may flow again. */
  async markReconciled(): Promise<void> {
    await this.#redis.set(this.#epochKey(), new Date().toISOString(), 'NX');
  }

  /** Whether Redis still holds the epoch a reconcile wrote (false after a flush). */
  async isReconciled(): Promise<boolean> {
    return (await this.#redis.exists(this.#epochKey())) === 1;
  }

  /**
   * Seeds each key's quota from a usage call made with a grant on that very key (the usage call
   * passes the gate like every request). Parked and disabled keys are skipped; their park ends in
   * a recheck anyway.
   */
  async syncQuota(fetchUsage: FetchUsage = this.#requireUsageSource()): Promise<QuotaSyncResult[]> {
    const results: QuotaSyncResult[] = [];
    for (const names of this.#names) results.push(await this.#syncKey(names, fetchUsage));
    return results;
  }

  async #syncKey(names: KeyRedisNames, fetchUsage: FetchUsage): Promise<QuotaSyncResult> {
    const { fingerprint } = names;
    try {
      const { grant, grantedBefore } = await this.#acquireWithCount('sync', [names], undefined, undefined);
      const usage = await fetchUsage(grant);
      const remaining = await this.#scripts.syncQuota(names, usage.remaining, grantedBefore, usage.validUntil, this.#recheckMs, STATE_TTL_MS);
      this.#warnedUnknown.delete(fingerprint);
      return { fingerprint, remaining, validUntil: usage.validUntil, error: null };
    } catch (error) {
      this.#logger.warn({ fingerprint, err: error }, 'quota sync failed for a key');
      return { fingerprint, remaining: null, validUntil: null, error };
    }
  }

  #requireUsageSource(): FetchUsage {
    if (!this.#usageSource) throw new ConfigError('syncQuota needs a usage source (setUsageSource)');
    return this.#usageSource;
  }

  /** A backfill met keys whose quota is unknown while it must keep the watch reserve: ask the service. */
  async #syncUnknown(fingerprints: readonly string[]): Promise<boolean> {
    const source = this.#usageSource;
    if (!source) return false;
    return this.#unknownSyncs.sync(fingerprints, async (fp) => {
      const names = this.#names.find((n) => n.fingerprint === fp);
      return names !== undefined && (await this.#syncKey(names, source)).error === null;
    });
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
    const guarded = jobId !== undefined && this.#schedule !== null;
    const budgetMode = guarded && (await this.#budgetExpected(jobId)) ? 'expected' : 'present';
    let registered = false;
    try {
      for (;;) {
        if (signal?.aborted) throw new AbortedError();
        const reply = await this.#scripts.acquire({
          mode,
          waiter,
          watchWaiting,
          budget: jobId === undefined ? null : this.#budgetKey(jobId),
          budgetMode,
          epoch: guarded ? this.#epochKey() : null,
          keys: names,
          ratePerKey: this.#ratePerKey,
          headroomMs: this.#headroomMs,
          headroomCapMs: this.#headroomCapMs,
          lookaheadMs: this.#intervalMs / 2,
          reserve: this.#reserve,
          waiterTtlMs: WAITER_TTL_MS,
          recheckMs: this.#recheckMs,
          stateTtlMs: STATE_TTL_MS,
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
          case 'lost': {
            registered = false;
            const error = new LimiterStateLostError(jobId ?? '', reply.what);
            this.#logger.warn({ jobId, missing: reply.what }, 'limiter refused a grant: Redis lost the schedule');
            for (const listener of this.#lostListeners) listener(error);
            throw error;
          }
          case 'unknown':
            registered = false;
            // Keep the watch reserve: learn the quota first, then ask again.
            if (!(await this.#syncUnknown(reply.fingerprints))) {
              throw new QuotaExhaustedError(new Date(Date.now() + UNKNOWN_SYNC_BACKOFF_MS));
            }
            break;
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

  #epochKey(): string {
    return `${this.#prefix}:epoch`;
  }
}

export function createRedisGate(options: RedisGateOptions): RedisGate {
  return new RedisGate(options);
}
