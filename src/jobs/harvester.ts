/**
 * The worker: takes slices and watch ticks from the queues and runs them until stopped. On start
 * it reconciles Redis with Postgres and seeds each key's quota; it reconciles again whenever Redis
 * may have lost the schedule (a reconnect, a limiter refusal for a missing epoch or budget, a
 * periodic check) and every `reconcileMs` to pick up runnable slices nothing holds; on stop it
 * lets every in-flight page commit, then returns.
 */
import { setMaxListeners } from 'node:events';
import { ApiError } from '../api-client/errors.ts';
import type { RequestPriority } from '../api-client/gate.ts';
import { ErrorCode } from '../errors.ts';
import type { PlanContext } from './kind.ts';
import type { QuotaSyncResult } from './limiter/index.ts';
import { tuneJitForPages } from './jit.ts';
import { QueueWorkers, type SliceTask, type TaskOutcome } from './queue.ts';
import { reconcile } from './reconcile.ts';
import { usageSource, type Services } from './services.ts';
import { failSlice, runSlice } from './slice-runner.ts';
import { parallelismCap, targetParallelism } from './time-slices.ts';
import { Walkers } from './walkers.ts';
import { runWatchTick } from './watch.ts';
import { recentLatencyMs } from '../store/job-status.ts';
import { recordKeyQuota } from '../store/outbox.ts';
import { recordKeyRefusedForQuota } from '../store/quota-events.ts';
import { NotifyLoop } from './notify.ts';
import { GroupCommitter } from '../store/group-commit.ts';
import { claimWorkerPrefix, PREFIX_HEARTBEAT_MS, touchWorkerPrefix } from '../store/worker-prefixes.ts';

/**
 * How long a page fetched ahead of its commit may wait to share a transaction (GroupCommitter's
 * gatherMs): at one key's rate, batches hold ~3.7 pages instead of 1 and the worker spends less
 * CPU a page. It was off for a while because a longer synchronous stretch can delay a granted
 * request past its slot; a late grant is now given back instead of sent (LateGrantError).
 */
const GATHER_MS = 250;

/** Watch passes walked at once by a process when HarvesterOptions.watchConcurrency is not given. */
const DEFAULT_WATCH_CONCURRENCY = 4;

export interface HarvesterOptions {
  /** Backfill slices walked at once by this process. */
  concurrency: number;
  /** Watch passes walked at once by this process. */
  watchConcurrency?: number;
  /** Re-sync quota from /v3/key-usage-info this often (one request per key). */
  quotaSyncMs?: number;
  lockDurationMs?: number;
  /** Reconcile with Postgres this often (lost schedules, slices nothing holds); default 30 s. */
  reconcileMs?: number;
  /** Wait before a failed page is fetched again, or a walk broken after progress runs again; default TRANSIENT_RETRY_MS (2 s). */
  transientRetryMs?: number;
  onPage?: Parameters<typeof runSlice>[1]['onPage'];
}

export const DEFAULT_RECONCILE_MS = 30_000;
/** How often a worker asks whether a key's quota needs asking the service again (SYNC_DUE_LUA). */
export const DEFAULT_QUOTA_SYNC_MS = 10 * 60_000;
/**
 * A key nothing was granted on since its last sync is asked again only after this long: harvest's
 * count of what is left is exact while it alone uses the key; this catches use elsewhere and a new
 * billing period (~30 requests a month a key, where every 10 minutes was 4,320 each process).
 */
export const QUOTA_IDLE_SYNC_MS = 24 * 3_600_000;
/** After a loss, how long a recovery waits for the runs that started before it to end, at most. */
const DRAIN_CAP_MS = 30_000;

export const DEFAULT_LATENCY_MS = 600;

/** Requests per second all configured keys allow together. */
export function pooledRate(config: Services['config']): number {
  return Math.max(1, config.apiKeys.length) * config.ratePerKey;
}

export async function planContext(services: Services): Promise<PlanContext> {
  const latency = await recentLatencyMs(services.pool).catch(() => null);
  return {
    pooledRate: pooledRate(services.config),
    latencyMs: latency ?? DEFAULT_LATENCY_MS,
    now: new Date(),
  };
}

/**
 * Slices one process walks at once when the operator does not say (`harvest worker`, `--wait`,
 * `harvest wait`): enough to keep every configured key busy at the latency seen lately, capped as
 * a job's plan is (16 at one key and 600 ms; 151 at ten keys). A fixed 16 held three keys to ~26 of
 * their 60 requests a second, and a cap of 64 ten keys to about half of theirs.
 */
export async function defaultConcurrency(services: Services): Promise<number> {
  const ctx = await planContext(services);
  return targetParallelism(ctx.pooledRate, ctx.latencyMs, parallelismCap(ctx.pooledRate));
}

export interface Periodic {
  /** No more ticks; settles when the one running (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `fn` every `ms`, skipping a tick while the last one still runs: through an hour of Redis
 * away, bare intervals piled up ~120 reconciles that all ran at once when it came back. A failure
 * goes to `onError`; the timer does not hold the process open.
 */
export function periodic(ms: number, fn: () => Promise<unknown>, onError: (error: unknown) => void): Periodic {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running !== null) return;
    running = fn().then(
      () => undefined,
      (error: unknown) => onError(error),
    );
    void running.finally(() => (running = null));
  }, ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export class Harvester {
  readonly #services: Services;
  readonly #options: HarvesterOptions;
  readonly #abort = new AbortController();
  #workers: QueueWorkers | null = null;
  #periodic: Periodic[] = [];
  #cleanups: Array<() => void> = [];
  #parallelism = 1;
  #cycleMs: number | null = null;
  /** Start times (performance.now) of the slice runs in flight in this process. */
  readonly #runs = new Set<{ startedAt: number }>();
  /** Slice walks running now and promised to split-off slices, per queue (SplitDeps.promiseWalker). */
  readonly #walkers: Walkers;
  #recovery: Promise<void> | null = null;
  #notify: NotifyLoop | null = null;
  #committer: GroupCommitter | null = null;

  constructor(services: Services, options: HarvesterOptions) {
    this.#services = services;
    this.#options = options;
    this.#walkers = new Walkers({ backfill: options.concurrency, watch: options.watchConcurrency ?? DEFAULT_WATCH_CONCURRENCY });
    // Every waiting acquire and retry sleep of every slice listens on this one signal.
    setMaxListeners(0, this.#abort.signal);
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  async start(): Promise<void> {
    const s = this.#services;
    tuneJitForPages();
    // One prefix per database: refused while workers of another were seen lately (migration 0014).
    await claimWorkerPrefix(s.pool, s.config.redisPrefix);
    await this.#refreshParallelism();
    const restored = await this.#reconcile();
    s.logger.info(restored, 'reconciled the queue with Postgres');
    // Seed each key's quota before the first grant (one request per key); a failure only logs.
    if (s.config.apiKeys.length > 0) await this.syncQuota({ ifDue: true }).catch((e: unknown) => s.logger.warn({ err: e }, 'quota sync failed'));
    // Pages of this process that are ready together commit in one transaction (group commit); a
    // page whose walk already fetches the next one may wait for company (GATHER_MS).
    const committer = new GroupCommitter(s.pool, { gatherMs: GATHER_MS });
    this.#committer = committer;
    const deps = {
      pool: s.pool,
      commit: (...args: Parameters<GroupCommitter['commit']>) => committer.commit(...args),
      client: s.client,
      logger: s.logger,
      signal: this.#abort.signal,
      quotaRecheckMs: s.config.quotaRecheckMs,
      maxAttemptsPerPage: s.config.maxAttemptsPerPage,
      maxStalePages: s.config.maxStalePages,
      transientRetryMs: this.#options.transientRetryMs,
      targetParallelism: () => this.#parallelism,
      promiseWalker: (priority: RequestPriority, options?: { always?: boolean }) => this.#walkers.promise(priority, options),
      onCycle: (ms: number) => this.#observeCycle(ms),
      ...(this.#options.onPage ? { onPage: this.#options.onPage } : {}),
      onSplit: async (jobId: string, sliceId: string, priority: RequestPriority) => {
        await s.queues.enqueueSlice(priority, { jobId, sliceId });
      },
    };
    this.#workers = new QueueWorkers({
      connection: s.redis,
      prefix: s.config.redisPrefix,
      concurrency: this.#options.concurrency,
      watchConcurrency: this.#options.watchConcurrency ?? DEFAULT_WATCH_CONCURRENCY,
      logger: s.logger,
      lockDurationMs: this.#options.lockDurationMs ?? s.config.lockDurationMs,
      runSlice: (task: SliceTask, priority: RequestPriority): Promise<TaskOutcome> => this.#walk(priority, () => runSlice(task.sliceId, deps)),
      runWatchTick: async (tick) => {
        await runWatchTick(tick.jobId, { pool: s.pool, queues: s.queues });
      },
      onFinalFailure: (task, error) => failSlice(s.pool, task.sliceId, error),
    });
    // Redis is only the schedule: after a reconnect it may have come back empty (restart without
    // persistence, failover), so put everything runnable back from Postgres.
    let connectedOnce = false;
    const onReady = () => {
      if (!connectedOnce) {
        connectedOnce = true;
        return;
      }
      this.#recover('Redis reconnected');
    };
    if (s.redis.status === 'ready') connectedOnce = true;
    s.redis.on('ready', onReady);
    this.#cleanups.push(() => s.redis.off('ready', onReady));
    // A flush on a live connection (failover to an empty replica) has no reconnect to announce it:
    // the limiter notices on the next job grant (no epoch), the periodic check below otherwise.
    this.#cleanups.push(s.gate.onStateLost(() => this.#recover('the limiter found the schedule gone')));
    const every = (ms: number, fn: () => Promise<unknown>) => {
      this.#periodic.push(periodic(ms, fn, (e) => s.logger.warn({ err: e }, 'periodic task failed')));
    };
    every(30_000, () => this.#refreshParallelism());
    every(PREFIX_HEARTBEAT_MS, () => touchWorkerPrefix(s.pool, s.config.redisPrefix));
    // Notifications go out on a loop of their own: a dead webhook never slows a page.
    this.#notify = new NotifyLoop({ pool: s.pool, logger: s.logger, targets: s.config.notifyUrls, stalledAfterMs: s.config.stalledAfterMs, rateWaits: s.rateWaits });
    this.#notify.start();
    every(this.#options.reconcileMs ?? DEFAULT_RECONCILE_MS, () => this.#periodicReconcile());
    if (s.config.apiKeys.length > 0) every(this.#quotaSyncMs, () => this.syncQuota({ ifDue: true }));
  }

  get #quotaSyncMs(): number {
    return this.#options.quotaSyncMs ?? DEFAULT_QUOTA_SYNC_MS;
  }

  /**
   * Seeds / refreshes each key's remaining quota from /v3/key-usage-info (one gated request per
   * key, each costing a request of quota). `ifDue`: only keys no process synced within the sync
   * interval and, unless something was granted on them since, within QUOTA_IDLE_SYNC_MS (the
   * start-up and periodic syncs; `harvest quota` asks for every key, one a 401 disabled included:
   * `recheckRefused`).
   */
  async syncQuota(options: { ifDue?: boolean; recheckRefused?: boolean } = {}): Promise<QuotaSyncResult[]> {
    const s = this.#services;
    const ifDue = options.ifDue ? { intervalMs: this.#quotaSyncMs * 0.9, idleMs: QUOTA_IDLE_SYNC_MS } : undefined;
    const results = await s.gate.syncQuota(usageSource(s.client, s.gate), { ...(ifDue ? { ifDue } : {}), recheckRefused: options.recheckRefused === true });
    for (const r of results) {
      if (r.error === null) s.logger.info({ fingerprint: r.fingerprint, remaining: r.remaining }, 'quota synced');
      // What the worker learned of the key, and a quota.low event when it crossed 20% or 10%.
      if (r.error === null && r.remaining !== null) {
        await recordKeyQuota(s.pool, { fingerprint: r.fingerprint, remaining: r.remaining, validUntil: r.validUntil }).catch((e: unknown) =>
          s.logger.warn({ err: e }, 'recording the quota level failed'),
        );
      }
      // A key that ran out since the last sync (30% left then, spent now) has its usage call
      // refused (403/402) like its pages, so no answer ever shows it below 10%: the refusal is
      // announced as the key spent, once per running out whichever worker meets it first.
      const refusedWith = quotaRefusalStatus(r.error);
      if (refusedWith !== null) {
        await recordKeyRefusedForQuota(s.pool, { fingerprint: r.fingerprint, status: refusedWith }).catch((e: unknown) =>
          s.logger.warn({ err: e }, 'recording the spent quota failed'),
        );
      }
    }
    return results;
  }

  #reconcile() {
    const s = this.#services;
    return reconcile({ pool: s.pool, queues: s.queues, budgets: s.gate });
  }

  async #walk<T>(priority: RequestPriority, run: () => Promise<T>): Promise<T> {
    this.#walkers.started(priority);
    try {
      return await this.#tracked(run);
    } finally {
      this.#walkers.ended(priority);
    }
  }

  async #tracked<T>(run: () => Promise<T>): Promise<T> {
    const entry = { startedAt: performance.now() };
    this.#runs.add(entry);
    try {
      return await run();
    } finally {
      this.#runs.delete(entry);
    }
  }

  /** Picks up what nothing holds; a lost epoch means Redis lost everything, so recover instead. */
  async #periodicReconcile(): Promise<void> {
    if (this.#recovery) return;
    if (!(await this.#services.gate.isReconciled())) {
      this.#recover('periodic check found the schedule gone');
      return;
    }
    const r = await this.#reconcile();
    if (r.requeued > 0 || r.rescheduled > 0) this.#services.logger.warn(r, 'periodic reconcile re-queued work nothing held');
  }

  /**
   * Redis lost the schedule. Budgets are restored as max_requests − requests_spent, and a request
   * counts in requests_spent only once its page (or its failure) is recorded: so first let every
   * run of this process that started before now end (their next acquire is refused, their
   * requests get recorded), then reconcile. One recovery at a time; later triggers join it.
   * Another process's requests in flight at the moment of loss are not waited for: each worker
   * drains its own before it restores, the first restore wins (budgets are set only where none is).
   */
  #recover(why: string): void {
    if (this.#recovery || this.#abort.signal.aborted) return;
    const s = this.#services;
    const lostAt = performance.now();
    this.#recovery = (async () => {
      const deadline = lostAt + DRAIN_CAP_MS;
      while ([...this.#runs].some((r) => r.startedAt <= lostAt) && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const r = await this.#reconcile();
      s.logger.warn({ ...r, why }, 'Redis lost the schedule: reconciled the queue and budgets with Postgres');
    })()
      .catch((e: unknown) => s.logger.error({ err: e, why }, 'reconcile after a Redis loss failed'))
      .finally(() => {
        this.#recovery = null;
      });
  }

  async #refreshParallelism(): Promise<void> {
    const ctx = await planContext(this.#services);
    this.#parallelism = targetParallelism(ctx.pooledRate, this.#cycleMs ?? ctx.latencyMs, parallelismCap(ctx.pooledRate));
  }

  /**
   * Sizes parallelism from the whole page cycle this process sees (request + commit + bookkeeping),
   * not the service's latency alone: when commits slow down under load, more slices keep the keys
   * busy. An exponential average over the last ~20 pages.
   */
  #observeCycle(ms: number): void {
    this.#cycleMs = this.#cycleMs === null ? ms : this.#cycleMs * 0.95 + ms * 0.05;
    const rate = pooledRate(this.#services.config);
    this.#parallelism = targetParallelism(rate, this.#cycleMs, parallelismCap(rate));
  }

  /** Sends what the outbox holds now, waiting at most `ms` (NotifyLoop.flush). */
  async flushNotifications(ms = 5_000): Promise<void> {
    await this.#notify?.flush(ms);
  }

  /**
   * Stops taking work; in-flight pages commit, limiter waits abort, then the queues close. A Redis
   * that stays unreachable for `redisGraceMs` does not hold the stop forever, as BullMQ's close
   * (and a walk's next limiter call) would wait for it: once no request is in flight and no page
   * waits to commit (both need only the service and Postgres), the stop ends without Redis, and
   * the caller exits. Postgres has every page committed; the slices left active in BullMQ are
   * taken up again once their locks lapse, or from Postgres when the queue is reconciled.
   */
  async stop(options: { redisGraceMs?: number } = {}): Promise<{ redisGone: boolean }> {
    // Ticks still running (a quota sync's request) are waited for, within the Redis grace.
    const ticks = this.#periodic.splice(0).map((p) => p.stop());
    for (const c of this.#cleanups.splice(0)) c();
    this.#abort.abort();
    // The queue workers stop taking slices at once (closing them waits for the walks in hand, which
    // the abort ends), not after the notification loop has wound down.
    const graceful = Promise.all([this.#notify?.stop(), this.#workers?.close(), ...ticks]);
    // Left behind when Redis is gone: its failure once the connections drop must not crash the exit.
    graceful.catch(() => undefined);
    const redisGone = unreachableFor(this.#services.redis, options.redisGraceMs ?? REDIS_GRACE_MS);
    let gone: boolean;
    try {
      gone = (await Promise.race([graceful.then(() => 'stopped' as const), redisGone.promise])) === 'redis-gone';
    } finally {
      redisGone.cancel();
    }
    this.#notify = null;
    this.#workers = null;
    if (gone) {
      const inFlightAtGone = this.#services.client.inFlight;
      const quiet = await this.#quiet(this.#services.config.requestDeadlineMs + 5_000);
      this.#services.logger.error(
        { inFlightAtGone, inFlight: this.#services.client.inFlight, committing: this.#committer?.busy ?? false },
        quiet
          ? 'Redis is unreachable: stopping without it (every page sent is committed in Postgres; the slices in hand run again later)'
          : 'Redis is unreachable: stopping without it while requests are still out (their pages are not committed)',
      );
      return { redisGone: true };
    }
    await this.#recovery;
    return { redisGone: false };
  }

  /**
   * Waits (at most `ms`) until no request of this process is in flight and no page waits to
   * commit, seen twice 200 ms apart (a response between its answer and its commit is neither for
   * a moment); answers whether it got there.
   */
  async #quiet(ms: number): Promise<boolean> {
    const busy = () => this.#services.client.inFlight > 0 || (this.#committer?.busy ?? false);
    const until = Date.now() + ms;
    let calm = 0;
    while (Date.now() < until) {
      calm = busy() ? 0 : calm + 1;
      if (calm >= 2) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }
}

/**
 * The status of the service's quota refusal (403/402) of a usage call, or null for any other
 * failure: a limiter refusal (the key disabled, say) is not the service saying the key is spent.
 */
function quotaRefusalStatus(error: unknown): number | null {
  return error instanceof ApiError && error.code === ErrorCode.API_QUOTA_EXHAUSTED ? error.status : null;
}

/** How long a stop waits for a Redis that is unreachable before it closes without it. */
const REDIS_GRACE_MS = 10_000;

/**
 * Resolves 'redis-gone' once `redis` has not answered for `ms`: not ready that long in a row (it
 * refused connections, it is reconnecting), or a PING of this check unanswered that long. A
 * blackholed host, a SIGSTOPped server or a partition keeps the connection `ready` while nothing
 * comes back (12 s seen with a PING pending), so the status alone never started the grace. One
 * PING at a time, a new one once the last is answered (a reply error is an answer); checked every
 * 250 ms. A PING left unanswered is dropped with the connection when the caller closes it.
 */
function unreachableFor(redis: Services['redis'], ms: number): { promise: Promise<'redis-gone'>; cancel(): void } {
  let timer: NodeJS.Timeout | null = null;
  let cancelled = false;
  const promise = new Promise<'redis-gone'>((resolve) => {
    let notReadySince: number | null = null;
    let pingSentAt: number | null = null;
    const probe = () => {
      if (pingSentAt !== null || cancelled) return;
      const sentAt = Date.now();
      pingSentAt = sentAt;
      const answered = () => {
        if (pingSentAt === sentAt) pingSentAt = null;
      };
      redis.ping().then(answered, answered);
    };
    probe();
    timer = setInterval(() => {
      const now = Date.now();
      if (redis.status === 'ready') notReadySince = null;
      else notReadySince ??= now;
      probe();
      const silentSince = Math.min(notReadySince ?? now, pingSentAt ?? now);
      if (now - silentSince >= ms) resolve('redis-gone');
    }, 250);
    timer.unref();
  });
  return {
    promise,
    cancel: () => {
      cancelled = true;
      if (timer !== null) clearInterval(timer);
    },
  };
}
