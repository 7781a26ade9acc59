/**
 * The worker: takes slices and watch ticks from the queues and runs them until stopped. On start
 * it reconciles Redis with Postgres (so nothing is lost if Redis was flushed) and seeds each
 * key's quota; on stop it lets every in-flight page commit, then returns.
 */
import { setMaxListeners } from 'node:events';
import type { Grant, RequestPriority, RequestGate } from '../api-client/gate.ts';
import { AppError, ErrorCode } from '../errors.ts';
import type { PlanContext } from './kind.ts';
import type { QuotaSyncResult } from './limiter/index.ts';
import { QueueWorkers, type SliceTask, type TaskOutcome } from './queue.ts';
import { reconcile } from './reconcile.ts';
import type { Services } from './services.ts';
import { failSlice, runSlice } from './slice-runner.ts';
import { targetParallelism } from './time-slices.ts';
import { runWatchTick } from './watch.ts';
import { recentLatencyMs } from '../store/job-status.ts';

export interface HarvesterOptions {
  /** Backfill slices walked at once by this process. */
  concurrency: number;
  /** Watch passes walked at once by this process. */
  watchConcurrency?: number;
  /** Re-sync quota from /v3/key-usage-info this often (one request per key). */
  quotaSyncMs?: number;
  lockDurationMs?: number;
  onPage?: Parameters<typeof runSlice>[1]['onPage'];
}

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

/** A gate that hands out one grant already taken, for a call that must use that very key. */
function oneGrantGate(grant: Grant, gate: RequestGate): RequestGate {
  let used = false;
  return {
    async acquire() {
      if (used) throw new AppError(ErrorCode.API_TRANSIENT, 'quota sync gets one attempt per key');
      used = true;
      return grant;
    },
    report: (g, outcome) => gate.report(g, outcome),
  };
}

export class Harvester {
  readonly #services: Services;
  readonly #options: HarvesterOptions;
  readonly #abort = new AbortController();
  #workers: QueueWorkers | null = null;
  #timers: NodeJS.Timeout[] = [];
  #cleanups: Array<() => void> = [];
  #parallelism = 1;
  #cycleMs: number | null = null;

  constructor(services: Services, options: HarvesterOptions) {
    this.#services = services;
    this.#options = options;
    // Every waiting acquire and retry sleep of every slice listens on this one signal.
    setMaxListeners(0, this.#abort.signal);
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  async start(): Promise<void> {
    const s = this.#services;
    await this.#refreshParallelism();
    const restored = await reconcile({ pool: s.pool, queues: s.queues, budgets: s.gate });
    s.logger.info(restored, 'reconciled the queue with Postgres');
    // Seed each key's quota before the first grant (one request per key); a failure only logs.
    if (s.config.apiKeys.length > 0) await this.syncQuota().catch((e: unknown) => s.logger.warn({ err: e }, 'quota sync failed'));
    const deps = {
      pool: s.pool,
      client: s.client,
      logger: s.logger,
      signal: this.#abort.signal,
      targetParallelism: () => this.#parallelism,
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
      watchConcurrency: this.#options.watchConcurrency ?? 4,
      logger: s.logger,
      lockDurationMs: this.#options.lockDurationMs ?? s.config.lockDurationMs,
      runSlice: (task: SliceTask): Promise<TaskOutcome> => runSlice(task.sliceId, deps),
      runWatchTick: async (tick) => {
        await runWatchTick(tick.jobId, { pool: s.pool, queues: s.queues });
      },
      onFinalFailure: (task, error) => failSlice(s.pool, task.sliceId, error),
    });
    // Redis is only the schedule: after a reconnect it may have come back empty (restart without
    // persistence, failover, flush), so put everything runnable back from Postgres.
    let connectedOnce = false;
    const onReady = () => {
      if (!connectedOnce) {
        connectedOnce = true;
        return;
      }
      reconcile({ pool: s.pool, queues: s.queues, budgets: s.gate })
        .then((r) => s.logger.warn(r, 'Redis reconnected: reconciled the queue with Postgres'))
        .catch((e: unknown) => s.logger.error({ err: e }, 'reconcile after a Redis reconnect failed'));
    };
    if (s.redis.status === 'ready') connectedOnce = true;
    s.redis.on('ready', onReady);
    this.#cleanups.push(() => s.redis.off('ready', onReady));
    const every = (ms: number, fn: () => Promise<unknown>) => {
      const t = setInterval(() => void fn().catch((e: unknown) => s.logger.warn({ err: e }, 'periodic task failed')), ms);
      t.unref();
      this.#timers.push(t);
    };
    every(30_000, () => this.#refreshParallelism());
    if (s.config.apiKeys.length > 0) every(this.#options.quotaSyncMs ?? 10 * 60_000, () => this.syncQuota());
  }

  /** Seeds / refreshes each key's remaining quota from /v3/key-usage-info (one gated request per key). */
  async syncQuota(): Promise<QuotaSyncResult[]> {
    const s = this.#services;
    const results = await s.gate.syncQuota(async (grant) => {
      const usage = await s.client.keyUsageInfo({ gate: oneGrantGate(grant, s.gate) });
      return { remaining: usage.remainingRequests, validUntil: usage.validUntil };
    });
    for (const r of results) {
      if (r.error === null) s.logger.info({ fingerprint: r.fingerprint, remaining: r.remaining }, 'quota synced');
    }
    return results;
  }

  async #refreshParallelism(): Promise<void> {
    const ctx = await planContext(this.#services);
    this.#parallelism = targetParallelism(ctx.pooledRate, this.#cycleMs ?? ctx.latencyMs);
  }

  /**
   * Sizes parallelism from the whole page cycle this process sees (request + commit + bookkeeping),
   * not the service's latency alone: when commits slow down under load, more slices keep the keys
   * busy. An exponential average over the last ~20 pages.
   */
  #observeCycle(ms: number): void {
    this.#cycleMs = this.#cycleMs === null ? ms : this.#cycleMs * 0.95 + ms * 0.05;
    this.#parallelism = targetParallelism(pooledRate(this.#services.config), this.#cycleMs);
  }

  /** Stops taking work; in-flight pages commit, limiter waits abort, then the queues close. */
  async stop(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    for (const c of this.#cleanups.splice(0)) c();
    this.#abort.abort();
    await this.#workers?.close();
    this.#workers = null;
  }
}
