/**
 * The BullMQ wiring: the only importer of bullmq. Redis holds only what should run next: one
 * BullMQ job per runnable slice (id `s-<sliceId>`, so a slice is never queued twice) and one
 * job scheduler per watch. Job data names ids only, never a key. Postgres stays the record: if
 * Redis is flushed, reconcile() puts every unfinished slice back from Postgres.
 *
 * On Redis Cluster (HARVEST_REDIS_CLUSTER) BullMQ's scripts touch many keys of one queue at once,
 * so its prefix must be a hash tag: the queues live under `{<prefix>}:` there (bullPrefix).
 */
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import type { RequestPriority } from '../api-client/gate.ts';
import { redisAddresses } from '../config.ts';
import { throttledLog, type Logger } from '../logger.ts';
import { jobIdSchema } from '../store/job-id.ts';
import { isPermanentError } from './error-decision.ts';
import type { RedisConnection } from './redis-keys.ts';

export const QUEUE_NAMES = { backfill: 'backfill', watch: 'watch' } as const;

// Job and slice ids are both bigint identities.
const id = jobIdSchema;

// Task data outlives deploys and crosses processes: it is parsed, not trusted, when taken.
const SliceTask = z.object({ jobId: id, sliceId: id });
const WatchTick = z.object({ jobId: id });
export type SliceTask = z.infer<typeof SliceTask>;
export type WatchTick = z.infer<typeof WatchTick>;

/** What a processor tells the adapter to do with its BullMQ job. */
export type TaskOutcome =
  | { kind: 'done' }
  /** Run again at `atMs` (quota parked, shutdown mid-walk): the job keeps its id. */
  | { kind: 'later'; atMs: number };

/**
 * The seed nodes of a cluster: REDIS_URL lists one or more `redis://[user:password@]host:port`
 * addresses, comma separated; the client learns the rest of the cluster from any of them.
 */
export function clusterSeeds(url: string): { nodes: { host: string; port: number }[]; username?: string; password?: string; tls: boolean } {
  let username: string | undefined;
  let password: string | undefined;
  const seeds = redisAddresses(url, true);
  const nodes = seeds.map((u) => {
    if (u.username) username = decodeURIComponent(u.username);
    if (u.password) password = decodeURIComponent(u.password);
    // An IPv6 literal keeps its brackets in a URL's hostname; the client wants the address.
    return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port || 6379) };
  });
  // rediss:// on any seed: every node over TLS (the password must not travel in clear).
  const tls = seeds.some((u) => u.protocol === 'rediss:');
  return { nodes, ...(username ? { username } : {}), ...(password ? { password } : {}), tls };
}

/** A connection to REDIS_URL: one Redis, or a Cluster from its seed nodes. Refuses a malformed REDIS_URL (ConfigError). */
export function createRedis(url: string, options: { cluster?: boolean } = {}): RedisConnection {
  // BullMQ needs maxRetriesPerRequest: null on connections used by workers.
  if (!options.cluster) {
    redisAddresses(url, false);
    return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
  }
  const { nodes, username, password, tls } = clusterSeeds(url);
  return new Cluster(nodes, {
    enableReadyCheck: true,
    lazyConnect: false,
    redisOptions: { maxRetriesPerRequest: null, ...(username ? { username } : {}), ...(password ? { password } : {}), ...(tls ? { tls: {} } : {}) },
  });
}

/** BullMQ's prefix: on a cluster in braces, so every key of a queue hashes to one slot. */
export function bullPrefix(connection: RedisConnection, prefix: string): string {
  return connection instanceof Cluster ? `{${prefix}}` : prefix;
}

const sliceJobId = (sliceId: string) => `s-${sliceId}`;
/** BullMQ states in which a job will still run (or is running): the slice is held. */
const HELD_STATES: ReadonlySet<string> = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);
const watchSchedulerId = (jobId: string) => `watch-${jobId}`;

const JOB_OPTIONS = {
  removeOnComplete: true,
  // Failures are recorded in Postgres; a failed BullMQ job left behind would block re-queueing the slice.
  removeOnFail: true,
  // Requests are retried in one layer only (the client, bounded per page; the runner then fails the
  // slice): what reaches the queue is a run that broke outside a request (Postgres unreachable,
  // a connection terminated mid-commit). Those go back with backoff; after these attempts the
  // slice fails with the last error. Permanent errors skip them (UnrecoverableError).
  attempts: 8,
  backoff: { type: 'exponential', delay: 2000 },
} as const;

export class HarvestQueues {
  readonly #queues: Record<RequestPriority, Queue>;

  constructor(connection: RedisConnection, redisPrefix: string, logger?: Logger) {
    const prefix = bullPrefix(connection, redisPrefix);
    this.#queues = {
      backfill: new Queue(QUEUE_NAMES.backfill, { connection, prefix }),
      watch: new Queue(QUEUE_NAMES.watch, { connection, prefix }),
    };
    // While Redis is away every queue reports it; the connection retries and reconcile follows.
    for (const queue of Object.values(this.#queues)) {
      const warn = logger ? throttledLog((fields, message) => logger.warn(fields, message), 'queue connection error') : null;
      queue.on('error', (error) => warn?.({ err: error, queue: queue.name }));
    }
  }

  /** Queues a slice to run (a no-op while the same slice is already queued or running). */
  async enqueueSlice(priority: RequestPriority, task: SliceTask, delayMs = 0): Promise<void> {
    await this.#queues[priority].add('slice', task, {
      ...JOB_OPTIONS,
      jobId: sliceJobId(task.sliceId),
      ...(delayMs > 0 ? { delay: delayMs } : {}),
      // Watches go first within their own queue too.
      ...(priority === 'watch' ? { priority: 1 } : {}),
    });
  }

  /**
   * Makes sure something holds a runnable slice: a BullMQ job that is active, waiting or delayed
   * is left alone; a missing one is added, and one left completed or failed (its run ended while
   * Postgres still says the slice should run) is replaced. Returns whether it queued anything.
   */
  async ensureSliceQueued(priority: RequestPriority, task: SliceTask): Promise<boolean> {
    const queue = this.#queues[priority];
    const state = await queue.getJobState(sliceJobId(task.sliceId));
    if (HELD_STATES.has(state)) return false;
    if (state !== 'unknown') {
      const job = await queue.getJob(sliceJobId(task.sliceId));
      // A job that became active meanwhile refuses removal (locked): then it is held after all.
      if (job && (await job.remove().then(() => false, () => true))) return false;
    }
    await this.enqueueSlice(priority, task);
    return true;
  }

  /** The queues that hold the slice now (waiting, delayed or being walked): at most one, normally. */
  async queuesHolding(sliceId: string): Promise<RequestPriority[]> {
    const held: RequestPriority[] = [];
    for (const [priority, queue] of Object.entries(this.#queues) as Array<[RequestPriority, Queue]>) {
      if (HELD_STATES.has(await queue.getJobState(sliceJobId(sliceId)))) held.push(priority);
    }
    return held;
  }

  async removeSlice(priority: RequestPriority, sliceId: string): Promise<void> {
    const job = await this.#queues[priority].getJob(sliceJobId(sliceId));
    if (job && !(await job.isActive())) await job.remove().catch(() => undefined);
  }

  /**
   * One scheduler per watch: a tick every `everyMs`; the tick starts a pass unless one runs. Its
   * first tick comes at once (BullMQ's `every`), or at `firstAt` when that is later: a scheduler
   * put back after Redis lost it (reconcile, resume) waits for the pass that is due, instead of
   * starting one early and buying its requests again.
   */
  async scheduleWatch(jobId: string, everyMs: number, firstAt: Date | null = null): Promise<void> {
    await this.#queues.watch.upsertJobScheduler(
      watchSchedulerId(jobId),
      firstAt !== null && firstAt.getTime() > Date.now() ? { every: everyMs, startDate: firstAt } : { every: everyMs },
      { name: 'tick', data: { jobId } satisfies WatchTick, opts: { removeOnComplete: true, removeOnFail: true } },
    );
  }

  /** Whether the watch's scheduler exists (a flushed Redis lost it). */
  async hasWatchSchedule(jobId: string): Promise<boolean> {
    return (await this.#queues.watch.getJobScheduler(watchSchedulerId(jobId))) !== undefined;
  }

  async unscheduleWatch(jobId: string): Promise<void> {
    await this.#queues.watch.removeJobScheduler(watchSchedulerId(jobId));
  }

  async counts(): Promise<Record<RequestPriority, Record<string, number>>> {
    const [backfill, watch] = await Promise.all([
      this.#queues.backfill.getJobCounts('active', 'waiting', 'delayed', 'prioritized'),
      this.#queues.watch.getJobCounts('active', 'waiting', 'delayed', 'prioritized'),
    ]);
    return { backfill, watch };
  }

  /** Removes every job and scheduler of this prefix (tests and `demo` only). */
  async obliterate(): Promise<void> {
    for (const queue of Object.values(this.#queues)) await queue.obliterate({ force: true });
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.#queues).map((q) => q.close()));
  }

  /** Drops the queues' connections without waiting for Redis (a Redis that is down). */
  disconnect(): void {
    for (const q of Object.values(this.#queues)) void q.disconnect().catch(() => undefined);
  }
}

export interface QueueWorkerOptions {
  connection: RedisConnection;
  /** HARVEST_REDIS_PREFIX; hash-tagged here when the connection is a cluster. */
  prefix: string;
  concurrency: number;
  watchConcurrency: number;
  logger: Logger;
  runSlice(task: SliceTask, priority: RequestPriority): Promise<TaskOutcome>;
  runWatchTick(tick: WatchTick): Promise<void>;
  /** A slice's last attempt failed: record it as failed in Postgres. */
  onFinalFailure(task: SliceTask, error: Error): Promise<void>;
  /** ms a worker may stay silent before its active jobs count as stalled (kill -9 recovery); HARVEST_LOCK_DURATION_MS. */
  lockDurationMs: number;
}

/** The error a run threw, behind the UnrecoverableError that told BullMQ not to retry it (its code is what Postgres records). */
const permanentCauses = new WeakMap<Error, unknown>();

/** The BullMQ adapter: the only code that knows about `Job`. */
export class QueueWorkers {
  readonly #workers: Worker[];

  /** Re-queues a slice whose own BullMQ job could not be moved (removed or taken meanwhile). */
  readonly #fallback: HarvestQueues;

  constructor(options: QueueWorkerOptions) {
    this.#fallback = new HarvestQueues(options.connection, options.prefix, options.logger);
    const lockDuration = options.lockDurationMs;
    const common = {
      connection: options.connection,
      prefix: bullPrefix(options.connection, options.prefix),
      lockDuration,
      stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)),
      // Processors are idempotent (commits are guarded by the slice's cursor): a stalled slice is
      // always safe to run again, however often its worker died.
      maxStalledCount: 1000,
      autorun: true,
    };
    const adapt = (priority: RequestPriority) => async (job: Job, token?: string) => {
      if (job.name === 'tick') {
        await options.runWatchTick(WatchTick.parse(job.data));
        return;
      }
      let outcome: TaskOutcome;
      let task: SliceTask;
      try {
        task = SliceTask.parse(job.data);
        outcome = await options.runSlice(task, priority);
      } catch (error) {
        // No retry can fix it: fail now (the 'failed' handler records it), not after 8 attempts.
        if (!isPermanentError(error)) throw error;
        const unrecoverable = new UnrecoverableError(error instanceof Error ? error.message : String(error));
        permanentCauses.set(unrecoverable, error);
        throw unrecoverable;
      }
      if (outcome.kind === 'later') {
        try {
          await job.moveToDelayed(outcome.atMs, token);
        } catch (error) {
          // This run no longer owns its BullMQ job (removed, or its lock taken by a stalled check):
          // the slice must not be left running with nothing queued, so queue it anew (a no-op
          // while another holder has it; the periodic reconcile is the last resort).
          options.logger.warn({ err: error, task }, 'could not delay the slice job; re-queueing the slice');
          await this.#fallback.enqueueSlice(priority, task, Math.max(0, outcome.atMs - Date.now()));
        }
        throw new DelayedError();
      }
    };
    this.#workers = [
      new Worker(QUEUE_NAMES.backfill, adapt('backfill'), { ...common, concurrency: options.concurrency }),
      new Worker(QUEUE_NAMES.watch, adapt('watch'), { ...common, concurrency: options.watchConcurrency }),
    ];
    for (const worker of this.#workers) {
      const logError = throttledLog((fields, message) => options.logger.error(fields, message), 'queue worker error');
      worker.on('error', (error) => logError({ err: error, queue: worker.name }));
      worker.on('failed', (job, error) => {
        options.logger.warn({ err: error, task: job?.data, attempts: job?.attemptsMade }, 'slice attempt failed');
        const final = error instanceof UnrecoverableError || error.name === 'UnrecoverableError' || (job?.attemptsMade ?? 0) >= (job?.opts.attempts ?? 1);
        if (job && job.name === 'slice' && final) {
          const cause = permanentCauses.get(error);
          options.onFinalFailure(SliceTask.parse(job.data), cause instanceof Error ? cause : error).catch((e: unknown) =>
            options.logger.error({ err: e }, 'could not record a failed slice'),
          );
        }
      });
    }
  }

  /** Stops taking work and waits for the in-flight slices to commit their page and return. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.close()));
    await this.#fallback.close();
  }
}
