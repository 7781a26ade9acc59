/**
 * The shared per-key limiter: one RequestGate for every worker, process and machine, kept in Redis.
 * Each acquire is one Lua script (see lua.ts) that picks a key with a free rate slot, checks and
 * spends its quota and the job's budget, and honours watch priority, all in one atomic step.
 * Waiters of this process that ask the same question line up in a WaitLine (wait-line.ts): only
 * its front talks to Redis, and sleeps until the slot it was told about. Watches have their own
 * line, so they never queue behind backfills.
 * Key state lives in one namespace per service that every deployment on this Redis shares; budgets
 * and the reconcile epoch live under the deployment's prefix; all of it under one hash tag, so a
 * Redis Cluster runs each script on one node (key-layout.ts).
 */
import { randomUUID } from 'node:crypto';
import { localNow, type AcquireOptions, type AttemptOutcome, type Grant, type RequestGate } from '../../api-client/gate.ts';
import { isRetryable } from '../../api-client/errors.ts';
import { ConfigError } from '../../errors.ts';
import { silentLogger, type Logger } from '../../logger.ts';
import { sleep } from '../../sleep.ts';
import { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from './errors.ts';
import type { RedisConnection } from '../redis-keys.ts';
import { limiterLayout, type KeyRedisNames, type LimiterLayout } from './key-layout.ts';
import type { FetchUsage, LimiterStats, QuotaSyncResult, RedisGateOptions, RedisGrant, Usage } from './gate-types.ts';
import { readKeyStates, type KeyState } from './key-states.ts';
import { defineLimiterScripts, type AcquireMode, type AcquireReply, type LimiterScripts } from './scripts.ts';
import { DEFAULT_KEY_NAMESPACE } from './namespace.ts';
import { ScheduleKeys } from './schedule-keys.ts';
import { LimiterStateLostError } from './state-lost.ts';
import { UNKNOWN_SYNC_BACKOFF_MS, UnknownQuotaSyncs } from './unknown-quota.ts';
import { WaitLine, type LineOrder, type LineStep } from './wait-line.ts';
import { ClockOffset } from './clock-offset.ts';

export type { FetchUsage, KeyState, LimiterStats, QuotaSyncResult, RedisGateOptions, RedisGrant, Usage };

const DEFAULT_HEADROOM_MS = 25;
const DEFAULT_HEADROOM_CAP_MS = 1000;
const DEFAULT_RECHECK_MS = 10 * 60_000;
/** Shared key state expires after a day unused: a namespace outlives deployments, not forever. */
const STATE_TTL_MS = 24 * 3_600_000;

/** A watch that stops asking (crashed process) blocks backfills for at most this long. */
const WAITER_TTL_MS = 1000;
/**
 * A waiting line asks again at least this often whatever it was told: a watch line twice per
 * registration lifetime so backfills keep yielding to it; other lines once a second, so a key
 * unparked by another process is seen within a second (aborts need no wake-up: they leave the
 * line at once).
 */
const WATCH_MAX_SLEEP_MS = WAITER_TTL_MS / 2;
const MAX_SLEEP_MS = 1000;
/**
 * How much the lookahead exceeds the lead: an ask reaches Redis after the time it was told (its
 * timer fires no earlier, and the answer and the ask cross the network), so this only absorbs the
 * rounding of the times passed between them.
 */
const ASK_SLACK_MS = 3;
/** Keys at this many requests a second or more are asked for a whole interval ahead (see #leadMs). */
const WHOLE_INTERVAL_LEAD_MIN_RATE = 10;
/** Answers REPORT_LUA acts on whatever the key's strikes; any other is only worth a call when it takes a strike away. */
const ALWAYS_REPORTED = new Set([429, 401, 402, 403]);

interface Granted {
  grant: RedisGrant;
  grantedBefore: number;
  delayMs: number;
}

/** One question's line and, for watches, the waiter id that stands for the whole line in Redis. */
interface Lane {
  readonly line: WaitLine<Granted>;
  readonly waiter: string;
  /** Whether this lane's watch waiter may still be registered in Redis (removed when the line empties). */
  registered: boolean;
}

/** Jobs whose budget flag a gate keeps (#budgeted), about 100 bytes each: 1 MB at most. */
const BUDGETED_CACHE_MAX = 10_000;
/** Tries of one key's usage call when it fails with a 5xx, a time-out or a 429 (#syncKey). */
const USAGE_TRIES = 3;
const USAGE_RETRY_MIN_MS = 1000;

export class RedisGate implements RequestGate {
  readonly #redis: RedisConnection;
  readonly #scripts: LimiterScripts;
  readonly #layout: LimiterLayout;
  readonly #scheduleKeys: ScheduleKeys;
  readonly #secrets: ReadonlyMap<string, string>;
  readonly #names: readonly KeyRedisNames[];
  readonly #ratePerKey: number;
  readonly #intervalMs: number;
  readonly #leadMs: number;
  readonly #headroomMs: number;
  readonly #headroomCapMs: number;
  readonly #recheckMs: number;
  readonly #reserve: number;
  readonly #logger: Logger;
  readonly #warnedUnknown = new Set<string>();
  readonly #schedule: RedisGateOptions['schedule'] | null;
  /**
   * jobId → whether it has a budget; max_requests never changes once a job exists. At most
   * BUDGETED_CACHE_MAX entries, the oldest dropped first: a worker that runs for months sees every
   * job, and a dropped one costs one Postgres read.
   */
  readonly #budgeted = new Map<string, boolean>();
  readonly #lostListeners = new Set<(error: LimiterStateLostError) => void>();
  #usageSource: FetchUsage | null = null;
  readonly #unknownSyncs = new UnknownQuotaSyncs();
  /** Why each key's last sync of an unknown quota failed, until one succeeds (QuotaExhaustedError.unknownQuota). */
  readonly #unknownSyncErrors = new Map<string, string>();
  readonly #lanes = new Map<string, Lane>();
  readonly #stats: LimiterStats = { acquireCalls: 0, reportCalls: 0, reportsSkipped: 0, grants: 0, givenBack: 0 };
  readonly #clock = new ClockOffset();
  readonly #onGiveBack: ((fingerprint: string) => void) | null;
  /** This gate's once hash (lua.ts, ONCE): a spending call ioredis resends does not spend twice. */
  readonly #once: string;

  constructor(options: RedisGateOptions) {
    if (!(options.ratePerKey > 0)) throw new ConfigError('ratePerKey must be positive');
    if (!(options.watchReserve >= 0)) throw new ConfigError('watchReserve must not be negative');
    this.#redis = options.redis;
    this.#scripts = defineLimiterScripts(options.redis);
    this.#layout = limiterLayout(options.prefix, options.keyNamespace ?? DEFAULT_KEY_NAMESPACE);
    this.#scheduleKeys = new ScheduleKeys(options.redis, this.#layout);
    this.#secrets = new Map(options.keys.map((k) => [k.fingerprint, k.key]));
    if (this.#secrets.size !== options.keys.length) throw new ConfigError('the same API key is configured twice');
    this.#names = options.keys.map((k) => this.#layout.key(k.fingerprint));
    this.#ratePerKey = options.ratePerKey;
    this.#headroomMs = options.headroomMs ?? DEFAULT_HEADROOM_MS;
    this.#headroomCapMs = options.headroomCapMs ?? DEFAULT_HEADROOM_CAP_MS;
    this.#schedule = options.schedule ?? null;
    this.#intervalMs = (1000 + this.#headroomMs) / options.ratePerKey;
    // The line asks for a key's next slot one interval ahead, that is when the grant before it is
    // sent, so that both timers fire in one wake-up of the process (ACQUIRE_LUA, `lead`): at 20
    // requests a second that is one wake-up a page fewer. A key slower than 10 a second, where
    // wake-ups are few, keeps the half interval it had: a grant is held no longer than before (an
    // abort meanwhile cannot take it back, and a watch waits behind it).
    this.#leadMs = options.ratePerKey >= WHOLE_INTERVAL_LEAD_MIN_RATE ? this.#intervalMs : this.#intervalMs / 2;
    this.#recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
    this.#reserve = options.watchReserve;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'limiter' });
    this.#onGiveBack = options.onGiveBack ?? null;
    this.#once = this.#layout.once(randomUUID());
  }

  acquire(options: AcquireOptions = {}): Promise<RedisGrant> {
    // A gate with no key only reads (a process that looks: Services' keyless).
    if (this.#names.length === 0) return Promise.reject(new ConfigError('HARVEST_API_KEYS is not set: the limiter has no key to grant a request on'));
    const { priority = 'backfill', jobId, signal, retry = false, remainingPages } = options;
    // An estimate that is not a count of pages (NaN, infinite, negative) orders nothing.
    const order = jobId !== undefined && remainingPages !== undefined && Number.isFinite(remainingPages) && remainingPages >= 0 ? { group: jobId, weight: remainingPages } : undefined;
    return this.#acquireWithCount(priority, this.#names, jobId, signal, retry, order).then((r) => r.grant);
  }

  async #budgetExpected(jobId: string): Promise<boolean> {
    const known = this.#budgeted.get(jobId);
    if (known !== undefined) return known;
    const expected = await this.#schedule!.budgetExpected(jobId);
    if (this.#budgeted.size >= BUDGETED_CACHE_MAX) this.#budgeted.delete(this.#budgeted.keys().next().value!);
    this.#budgeted.set(jobId, expected);
    return expected;
  }

  /**
   * A 429 cools the key and widens its headroom, 401/402/403 disable or park it, and another answer
   * from the service (2xx–4xx) takes a strike away. So a clean answer on a grant whose key had no
   * strikes, or an answer REPORT_LUA ignores (none, 5xx), costs no Redis call: at 20 pages/s that
   * was one Lua call per page. A grant from elsewhere (no `strikes`) is always reported. A strike
   * that came after a grant was made (another request's 429) is taken away by the next clean
   * answer on a grant that saw it, one grant later than before.
   */
  async report(grant: Grant, outcome: AttemptOutcome): Promise<void> {
    const { status } = outcome;
    if (!ALWAYS_REPORTED.has(status)) {
      const strikes = (grant as Partial<RedisGrant>).strikes;
      if (status < 200 || status >= 500 || strikes === 0) {
        this.#stats.reportsSkipped++;
        return;
      }
    }
    const names = this.#namesOf(grant.fingerprint);
    this.#stats.reportCalls++;
    const until = await this.#scripts.report(names, status, this.#headroomMs, this.#recheckMs, this.#headroomCapMs);
    const fingerprint = grant.fingerprint;
    if (status === 429) this.#logger.debug({ fingerprint, until }, 'key rate-limited by the service; cooling');
    else if (status === 401) this.#logger.error({ fingerprint }, 'key rejected (401): disabled until unparked');
    else if (status === 403 || status === 402) this.#logger.warn({ fingerprint, status, until }, 'key out of quota: parked');
  }

  /** An unused grant (past its send-by time, or its connection never opened) returns its quota and budget units; see GIVE_BACK_LUA. */
  async giveBack(grant: Grant, options: { jobId?: string }): Promise<void> {
    this.#stats.givenBack++;
    this.#onGiveBack?.(grant.fingerprint);
    const budget = options.jobId === undefined ? null : this.#layout.budget(options.jobId);
    try {
      await this.#scripts.giveBack(this.#namesOf(grant.fingerprint), budget, this.#once);
      this.#logger.debug({ fingerprint: grant.fingerprint }, 'grant not sent (too late, or no connection); given back');
    } catch (error) {
      // A refund that fails only leaves one unit spent: not worth failing the call for.
      this.#logger.warn({ fingerprint: grant.fingerprint, err: error }, 'could not give an unsent grant back');
    }
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
  markReconciled(): Promise<void> {
    return this.#scheduleKeys.markReconciled();
  }

  /** Whether Redis still holds the epoch a reconcile wrote (false after a flush). */
  isReconciled(): Promise<boolean> {
    return this.#scheduleKeys.isReconciled();
  }

  /**
   * Seeds each key's quota from a usage call made with a grant on that very key (the usage call
   * passes the gate like every request, and costs a request of quota). Parked and disabled keys
   * are skipped; their park ends in a recheck anyway. With `ifDue`, only the keys SYNC_DUE_LUA
   * says are due: the periodic and start-up syncs of every process share one sync a key per
   * `intervalMs`, and skip a key nothing was granted on since for up to `idleMs`. With
   * `recheckRefused` (`harvest quota`) a key a 401 disabled is asked too: its answer disables it
   * again, or, the service accepting it now, seeds its quota and it grants again. Nothing else
   * lifted that disable, which lasts the day the key's state lives in Redis.
   */
  async syncQuota(
    fetchUsage: FetchUsage = this.#requireUsageSource(),
    options: { ifDue?: { intervalMs: number; idleMs: number }; recheckRefused?: boolean } = {},
  ): Promise<QuotaSyncResult[]> {
    const results: QuotaSyncResult[] = [];
    const due = options.ifDue;
    for (const names of this.#names) {
      if (due && !(await this.#scripts.syncDue(names, due.intervalMs, due.idleMs))) continue;
      if (options.recheckRefused) await this.#scripts.enable(names);
      results.push(await this.#syncKey(names, fetchUsage));
    }
    return results;
  }

  /**
   * One usage call on the key, each try on a grant of its own: a 5xx, a time-out or a 429 is
   * tried again (USAGE_TRIES in all, 1–2 s apart, as a page's request is), since one failure
   * leaves the quota unknown and a backfill parked on it (it was tried once).
   */
  async #syncKey(names: KeyRedisNames, fetchUsage: FetchUsage): Promise<QuotaSyncResult> {
    const { fingerprint } = names;
    for (let attempt = 1; ; attempt++) {
      try {
        const { grant, grantedBefore } = await this.#acquireWithCount('sync', [names], undefined, undefined);
        const usage = await fetchUsage(grant);
        const remaining = await this.#scripts.syncQuota(names, usage.remaining, grantedBefore, usage.validUntil, this.#recheckMs, STATE_TTL_MS);
        this.#warnedUnknown.delete(fingerprint);
        return { fingerprint, remaining, validUntil: usage.validUntil, error: null };
      } catch (error) {
        if (attempt < USAGE_TRIES && isRetryable(error)) {
          await sleep(USAGE_RETRY_MIN_MS + Math.random() * USAGE_RETRY_MIN_MS, undefined);
          continue;
        }
        this.#logger.warn({ fingerprint, err: error }, 'quota sync failed for a key');
        return { fingerprint, remaining: null, validUntil: null, error };
      }
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
      if (names === undefined) return false;
      const { error } = await this.#syncKey(names, source);
      // What a job parked for it says (its note): the client's errors name the endpoint and the
      // key's fingerprint, never the key.
      if (error === null) this.#unknownSyncErrors.delete(fp);
      else this.#unknownSyncErrors.set(fp, (error instanceof Error ? error.message : String(error)).slice(0, 300));
      return error === null;
    });
  }

  /**
   * Limits a job to `maxRequests` grants in total. An existing budget is kept (a re-run of a
   * stalled job must not refill it) unless `replace` is set (a submit: see ScheduleKeys.setBudget).
   * Either renews the key's TTL (BUDGET_TTL_MS). Returns the budget now remaining.
   */
  setBudget(jobId: string, maxRequests: number, options: { replace?: boolean } = {}): Promise<number> {
    return this.#scheduleKeys.setBudget(jobId, maxRequests, options.replace === true);
  }

  /** Grants the job may still take, or null when it has no budget. */
  budgetRemaining(jobId: string): Promise<number | null> {
    return this.#scheduleKeys.budgetRemaining(jobId);
  }

  async unparkKey(fingerprint: string): Promise<void> {
    await this.#scripts.unpark(this.#namesOf(fingerprint));
    this.#logger.info({ fingerprint }, 'key unparked by request');
  }

  /** Sets a key's remaining quota; null makes it unknown again. */
  async setQuota(fingerprint: string, remaining: number | null): Promise<void> {
    await this.#scripts.setQuota(this.#namesOf(fingerprint), remaining);
  }

  keyStates(): Promise<KeyState[]> {
    return readKeyStates(this.#redis, this.#names);
  }

  /** The state of keys named by fingerprint (keys this process was not given; see Services.keyStates). */
  keyStatesOf(fingerprints: readonly string[]): Promise<KeyState[]> {
    return readKeyStates(
      this.#redis,
      fingerprints.map((fp) => this.#layout.key(fp)),
    );
  }

  /** Counts of this gate's Lua calls and grants since it was made (a copy). */
  stats(): LimiterStats {
    return { ...this.#stats };
  }

  #laneFor(mode: AcquireMode, names: readonly KeyRedisNames[]): Lane {
    const id = names.length === this.#names.length ? mode : `${mode}:${names.map((n) => n.fingerprint).join(',')}`;
    let lane = this.#lanes.get(id);
    if (!lane) {
      const maxSleepMs = mode === 'watch' ? WATCH_MAX_SLEEP_MS : MAX_SLEEP_MS;
      lane = { line: new WaitLine<Granted>({ concurrency: names.length, maxSleepMs }), waiter: randomUUID(), registered: false };
      this.#lanes.set(id, lane);
    }
    return lane;
  }

  async #acquireWithCount(
    mode: AcquireMode,
    names: readonly KeyRedisNames[],
    jobId: string | undefined,
    signal: AbortSignal | undefined,
    retry = false,
    order?: LineOrder,
  ): Promise<{ grant: RedisGrant; grantedBefore: number }> {
    const guarded = jobId !== undefined && this.#schedule !== null;
    const budgetMode = guarded && (await this.#budgetExpected(jobId)) ? 'expected' : 'present';
    const lane = this.#laneFor(mode, names);
    const call = {
      mode,
      waiter: lane.waiter,
      watchWaiting: this.#layout.watchWaiting,
      budget: jobId === undefined ? null : this.#layout.budget(jobId),
      budgetMode,
      epoch: guarded ? this.#layout.epoch : null,
      once: this.#once,
      keys: names,
      ratePerKey: this.#ratePerKey,
      headroomMs: this.#headroomMs,
      headroomCapMs: this.#headroomCapMs,
      lookaheadMs: this.#leadMs + ASK_SLACK_MS,
      leadMs: this.#leadMs,
      reserve: this.#reserve,
      waiterTtlMs: WAITER_TTL_MS,
      recheckMs: this.#recheckMs,
      stateTtlMs: STATE_TTL_MS,
    } as const;
    const ask = async (): Promise<LineStep<Granted>> => {
      // More watches queued behind this one: backfills must keep yielding after it is granted.
      // (this call is one of the line's calls out; another out is a watch still to be served).
      const keep = mode === 'watch' && (lane.line.queued > 0 || lane.line.inFlight > 1);
      this.#stats.acquireCalls++;
      const sentAt = localNow();
      const reply = await this.#scripts.acquire({ ...call, keep });
      if (mode === 'watch') lane.registered = keep || reply.kind === 'wait';
      return this.#stepOf(reply, mode, jobId, sentAt);
    };
    try {
      const { grant, grantedBefore, delayMs } = await lane.line.join(ask, signal, retry, order);
      this.#stats.grants++;
      // The slot is ours and at most the lookahead away: wait for it even when aborted,
      // so a grant that spent quota and budget is always handed out and used.
      if (delayMs > 0) await sleep(Math.ceil(delayMs), undefined);
      return { grant, grantedBefore };
    } finally {
      // An aborted or refused watch must not hold backfills back until its entry expires.
      if (lane.registered && lane.line.idle) {
        lane.registered = false;
        await this.#redis.zrem(this.#layout.watchWaiting, lane.waiter).catch(() => undefined);
      }
    }
  }

  /** What one acquire answer means for the line: only a job's own refusal reaches its waiter. */
  /** `sentAt`: the local time the call went out (before Redis ran it). */
  async #stepOf(reply: AcquireReply, mode: AcquireMode, jobId: string | undefined, sentAt: number): Promise<LineStep<Granted>> {
    switch (reply.kind) {
      case 'ok': {
        const key = this.#secrets.get(reply.fingerprint);
        if (key === undefined) throw new Error(`limiter granted an unconfigured key ${reply.fingerprint}`);
        // The usage call that seeds the quota is itself granted while the quota is unknown.
        if (reply.quotaUnknown && mode !== 'sync') this.#warnUnknownQuota(reply.fingerprint);
        // Sent later than its slot plus the headroom, a request could share a one-second window
        // with `rate` more of its key: the attempt then sends nothing and gives the grant back.
        // The clock is read against the call's send time, not the time its answer was handled: a
        // process stalled while answers wait (its first seconds, say) would otherwise read the stall
        // as clock difference, push send-by back by as much and send late without noticing
        // (clock-offset.ts).
        this.#clock.observe(sentAt, reply.slotAt - reply.delayMs);
        const sendBy = reply.slotAt + this.#clock.ms + this.#headroomMs;
        const grant: RedisGrant = { key, fingerprint: reply.fingerprint, slotAt: reply.slotAt, strikes: reply.strikes, sendBy };
        return { kind: 'granted', value: { grant, grantedBefore: reply.grantedBefore, delayMs: reply.delayMs }, ready: reply.ready, nextMs: reply.nextMs };
      }
      case 'wait':
        return { kind: 'wait', waitMs: Math.max(reply.waitMs, 1) };
      case 'exhausted': {
        // Rare path: tell "every key refused (401)" apart from "quota spent", since the
        // first fails jobs at once and the second only parks them.
        const states = await this.keyStates();
        if (states.length > 0 && states.every((st) => st.disabled)) {
          return { kind: 'refused', error: new KeysRefusedError(states.map((st) => st.fingerprint)) };
        }
        return { kind: 'refused', error: new QuotaExhaustedError(reply.retryAt) };
      }
      case 'budget':
        return { kind: 'refused', error: new BudgetExhaustedError(jobId ?? '') };
      case 'lost': {
        const error = new LimiterStateLostError(jobId ?? '', reply.what);
        this.#logger.warn({ jobId, missing: reply.what }, 'limiter refused a grant: Redis lost the schedule');
        for (const listener of this.#lostListeners) listener(error);
        return { kind: 'refused', error };
      }
      case 'unknown':
        // Keep the watch reserve: learn the quota first, then ask again.
        if (await this.#syncUnknown(reply.fingerprints)) return { kind: 'again' };
        return {
          kind: 'refused',
          error: new QuotaExhaustedError(new Date(Date.now() + UNKNOWN_SYNC_BACKOFF_MS), {
            unknownQuota: this.#unknownSyncCause(reply.fingerprints),
          }),
        };
    }
  }

  /** Why the quota of these keys could not be learned: their own last sync failures. */
  #unknownSyncCause(fingerprints: readonly string[]): string {
    if (!this.#usageSource) return 'no usage source to ask';
    const causes = [...new Set(fingerprints.flatMap((fp) => this.#unknownSyncErrors.get(fp) ?? []))];
    return causes.length > 0 ? causes.join('; ') : 'no answer yet';
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
}

export function createRedisGate(options: RedisGateOptions): RedisGate {
  return new RedisGate(options);
}
