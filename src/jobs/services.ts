/**
 * The long-lived resources a command or worker needs, opened once and closed together:
 * Postgres pool, Redis connection, queues, the shared limiter (gate) and the API client.
 * Unreachable Postgres or Redis fails here with one line saying which and how to start it.
 */
import { Cluster } from 'ioredis';
import { withoutSendBy, type Grant, type RequestGate } from '../api-client/gate.ts';
import { ApiClient, type AttemptRecord, type RetryPolicy } from '../api-client/index.ts';
import { retryPolicyOf } from '../api-client/retry.ts';
import { redisAddresses, requireApiKeys, type Config } from '../config.ts';
import { AppError, ConfigError, ErrorCode, isAppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createPool, describeTarget, retryIdempotentWrite, sqlState, SqlState, type Pool } from '../store/db.ts';
import { DatabaseUnavailableError } from '../store/errors.ts';
import { getJob, recordRequests } from '../store/jobs.ts';
import { requireMigrated } from '../store/migrate.ts';
import { recentlySyncedKeys } from '../store/outbox.ts';
import { createRedisGate, keyNamespaceFor, type FetchUsage, type KeyState, type RedisGate } from './limiter/index.ts';
import { claimPrefixForDatabase } from './prefix-owner.ts';
import { createRedis, HarvestQueues } from './queue.ts';
import { RateWaitTracker } from './rate-wait.ts';
import type { RedisConnection } from './redis-keys.ts';
import { parallelismCap } from './time-slices.ts';

/** Redis cannot be reached at start (Postgres failing says so with the store's DatabaseUnavailableError). */
export class RedisUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.REDIS_UNAVAILABLE, message, options);
  }
}

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly pool: Pool;
  /** One Redis, or a Cluster when HARVEST_REDIS_CLUSTER is set. */
  readonly redis: RedisConnection;
  readonly queues: HarvestQueues;
  readonly gate: RedisGate;
  readonly rateWaits: RateWaitTracker;
  readonly client: ApiClient;
  /**
   * The keys' limiter state: the configured keys', or, in a process given none (`status`, the
   * dashboard), that of every key a worker synced in the last week, by fingerprint. So the keys
   * themselves need not be handed to a process that only looks.
   */
  keyStates(): Promise<KeyState[]>;
  close(): Promise<void>;
}

const redisHint = 'start it (`redis-server --daemonize yes`, your system service, or `docker compose up -d redis`)';
const pgHint = 'start it (`pg_ctlcluster 15 main start`, your system service, or `docker compose up -d postgres`)';

/**
 * What to do about a Postgres that answered but refused: "start it" only when it did not answer.
 * A missing database already says `harvest migrate`; a refused login names DATABASE_URL's user
 * and password (node-pg's "client password must be a string" means the URL has no password).
 */
function pgAdvice(error: unknown): string {
  const cause = isAppError(error) && error.cause !== undefined ? error.cause : error;
  const code = sqlState(cause) ?? sqlState(error);
  // (toConnectionError's reason for it already names `harvest migrate`)
  if (code === SqlState.INVALID_CATALOG_NAME) return isAppError(error) ? '' : '; `harvest migrate` creates it';
  const message = cause instanceof Error ? cause.message : '';
  if (code === '28P01' || code === '28000' || /SASL|password/i.test(message)) return '; check the user and password in DATABASE_URL';
  return `; ${pgHint}`;
}

/**
 * What Redis (or, for a cluster, the last node tried) last answered: the client retries behind
 * the ping, so the ping itself only ever says "timed out". ClusterAllFailedError carries the
 * node's own answer in lastNodeError (`ERR This instance has cluster support disabled`, WRONGPASS).
 */
function lastRedisError(redis: RedisConnection): () => Error | undefined {
  let last: Error | undefined;
  const listener = (error: unknown) => {
    if (!(error instanceof Error)) return;
    const nodeError = (error as { lastNodeError?: unknown }).lastNodeError;
    last = nodeError instanceof Error ? nodeError : error;
  };
  redis.on('error', listener);
  return () => {
    redis.off('error', listener);
    return last;
  };
}

async function checkRedis(redis: RedisConnection, url: string): Promise<void> {
  const lastError = lastRedisError(redis);
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 3000).unref()),
    ]);
    lastError();
  } catch (error) {
    const seen = lastError();
    const where = (() => {
      try {
        // A cluster's REDIS_URL lists several nodes: name their hosts, never a password.
        const hosts = redisAddresses(url, url.includes(',')).map((u) => u.host).join(',');
        return hosts === '' ? url.split('?')[0] : hosts;
      } catch {
        return 'REDIS_URL';
      }
    })();
    // Redis's own answer says what is wrong: a password refused is not a Redis to start. (Redis
    // replies carry no code but their first word, hence the text.)
    const reason = error instanceof Error && error.message === 'timed out' && seen ? seen.message : error instanceof Error ? error.message : String(error);
    throw new RedisUnavailableError(
      /^(NOAUTH|WRONGPASS)\b/.test(reason)
        ? `Redis at ${where} refused the credentials (${reason}): check the user and password in REDIS_URL`
        : /cluster support disabled/.test(reason)
          ? `Redis at ${where} is not a Redis Cluster (${reason}): unset HARVEST_REDIS_CLUSTER`
          : `cannot reach Redis at ${where} (${reason}): ${redisHint}`,
      { cause: seen ?? error },
    );
  }
  // A cluster node taken for one Redis answers the ping, then CROSSSLOT on the first script of
  // several keys: after `resume` had already flipped the job in Postgres. Refused before anything.
  if (!(redis instanceof Cluster)) {
    const info = await redis.info('cluster').catch(() => '');
    if (/^cluster_enabled:1\b/m.test(info)) throw new ConfigError('REDIS_URL is a Redis Cluster node: set HARVEST_REDIS_CLUSTER=true');
  }
  // ioredis selects REDIS_URL's database on connect and, when the server refuses it (an index past
  // its `databases`), goes on in database 0: another deployment's queues and limiter state.
  const db = redis instanceof Cluster ? 0 : (redis.options.db ?? 0);
  if (db > 0) {
    try {
      await redis.select(db);
    } catch (error) {
      throw new ConfigError(`REDIS_URL names database ${db}, which this Redis refuses (${error instanceof Error ? error.message : String(error)})`);
    }
  }
}

/**
 * A gate that hands out one grant already taken, for a call that must use that very key. The
 * grant goes out however late (it has no send-by time): there is no second one to take instead.
 */
function oneGrantGate(grant: Grant, gate: RequestGate): RequestGate {
  let used = false;
  return {
    async acquire() {
      if (used) throw new AppError(ErrorCode.API_TRANSIENT, 'quota sync gets one attempt per key');
      used = true;
      return withoutSendBy(grant);
    },
    // The grant as taken: the gate reads what it knows of it (its key's strikes).
    report: (_used, outcome) => gate.report(grant, outcome),
    // Handed out without a send-by time, so never late; given back when its connection never opened.
    giveBack: (_unused, options) => gate.giveBack(grant, options),
  };
}

/**
 * The usage call (/v3/key-usage-info) on the key of a grant the limiter already gave. It is tried
 * once: there is no second grant, and a failure should name its own cause (what a job parked on an
 * unknown quota says), not the one-grant gate's refusal of a retry.
 */
export function usageSource(client: ApiClient, gate: RequestGate): FetchUsage {
  return async (grant) => {
    const usage = await client.keyUsageInfo({
      gate: oneGrantGate(grant, gate),
      retryPolicy: { maxAttemptsTransient: 1, maxAttemptsRateLimited: 1, otherKeyOnRefusal: 0 },
    });
    return { remaining: usage.remainingRequests, validUntil: usage.validUntil };
  };
}

export interface OpenServicesOptions {
  /** Opens a database harvest has not migrated (the demo's probe of the `postgres` database); else one behind this version is refused. */
  unmigrated?: boolean;
  /** Also told of every attempt (metrics). */
  onAttempt?: (a: AttemptRecord) => void;
  /** Told of every grant the limiter took back unused (metrics). */
  onGiveBack?: (fingerprint: string) => void;
  /**
   * A process that calls no service (status, the dashboard, pause/resume/cancel): it opens without
   * HARVEST_API_KEYS, and shows the keys the workers synced (keyStates). Any other process needs a key.
   */
  keyless?: boolean;
  /**
   * Fields that replace the client's retry policy (the bounds from HARVEST_MAX_ATTEMPTS_PER_PAGE,
   * the defaults' 1–2 s wait after a 5xx): tests shorten the waits with it. Default: none.
   */
  retry?: Partial<RetryPolicy>;
}

/**
 * A pool on DATABASE_URL as every command first meets Postgres: reachable (else one line that says
 * why and what to do: start it, `harvest migrate` for a missing database, check the login) and
 * migrated to this version (else one line naming `harvest migrate`). Commands that need Postgres
 * alone (audit, export) open this; openServices opens it with Redis.
 */
export async function openCheckedPool(config: Config, options: { max?: number; applicationName?: string; unmigrated?: boolean } = {}): Promise<Pool> {
  const pool = createPool(config.databaseUrl, { max: options.max ?? 20, ...(options.applicationName ? { applicationName: options.applicationName } : {}) });
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    // Classified by code: DB_UNAVAILABLE is only ever a DatabaseUnavailableError.
    const reason = isAppError(error) && error.code === ErrorCode.DB_UNAVAILABLE ? (error as DatabaseUnavailableError).reason : error instanceof Error ? error.message : String(error);
    throw new DatabaseUnavailableError(describeTarget(config.databaseUrl), `${reason}${pgAdvice(error)}`, { cause: error });
  }
  try {
    if (!options.unmigrated) await requireMigrated(pool);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return pool;
}

export async function openServices(config: Config, logger: Logger, options: OpenServicesOptions = {}): Promise<Services> {
  if (!options.keyless) requireApiKeys(config);
  const pool = await openCheckedPool(config, options.unmigrated ? { unmigrated: true } : {});
  let redis: RedisConnection;
  try {
    redis = createRedis(config.redisUrl, { cluster: config.redisCluster });
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  redis.on('error', () => undefined);
  try {
    await checkRedis(redis, config.redisUrl);
    // A process that works the queue binds the prefix to this database, before anything is queued.
    if (!options.keyless && !options.unmigrated) await claimPrefixForDatabase(redis, pool, config.redisPrefix);
  } catch (error) {
    redis.disconnect();
    await pool.end().catch(() => undefined);
    throw error;
  }
  const queues = new HarvestQueues(redis, config.redisPrefix, logger);
  const gate = createRedisGate({
    redis,
    prefix: `${config.redisPrefix}:limiter`,
    // Per-key state is shared with every deployment that sends these keys to this service.
    keyNamespace: keyNamespaceFor(config.baseUrl),
    // Postgres says which jobs have a budget; a job whose budget Redis lost gets no grant.
    schedule: { budgetExpected: async (jobId) => ((await getJob(pool, jobId))?.maxRequests ?? null) !== null },
    keys: config.apiKeys,
    ratePerKey: config.ratePerKey,
    watchReserve: config.watchReserve,
    recheckMs: config.quotaRecheckMs,
    logger,
    ...(options.onGiveBack ? { onGiveBack: options.onGiveBack } : {}),
  });
  // Requests made outside any page (quota syncs, estimates) are still accounted for.
  const orphan = (a: AttemptRecord) => {
    const row = { endpoint: a.endpoint, keyFingerprint: a.keyFingerprint, status: a.status, durationMs: a.durationMs, at: a.at };
    retryIdempotentWrite(() => recordRequests(pool, [row])).catch(
      (error: unknown) => logger.warn({ err: error }, 'could not record a request'),
    );
  };
  const rateWaits = new RateWaitTracker(redis, config.redisPrefix);
  const client = new ApiClient({
    baseUrl: config.baseUrl,
    gate: rateWaits.wrap(gate),
    timeoutMs: config.requestTimeoutMs,
    deadlineMs: config.requestDeadlineMs,
    maxResponseBytes: config.maxResponseBytes,
    // One connection per slice in flight: undici's default 32 capped a process at ~58 req/s at
    // 300-800 ms (issue 13: three keys reached 0.87, ten keys 0.29 of the rate).
    connections: Math.max(32, parallelismCap(config.apiKeys.length * config.ratePerKey)),
    // The one retry layer: a page's 5xx/time-outs are retried here, up to the page's request bound.
    // A key the service refuses or finds spent is set aside and the call goes on with another.
    retry: retryPolicyOf(
      {
        maxAttemptsTransient: config.maxAttemptsPerPage,
        maxAttemptsRateLimited: config.maxAttemptsPerPage,
        maxAttempts: config.maxAttemptsPerPage,
        otherKeyOnRefusal: Math.max(0, config.apiKeys.length - 1),
      },
      options.retry,
    ),
    logger,
    onAttempt: (a, collected) => {
      options.onAttempt?.(a);
      if (!collected) orphan(a);
    },
  });
  // A backfill that finds a key's quota unknown asks the service before touching the watch reserve.
  gate.setUsageSource(usageSource(client, gate));
  return {
    config,
    logger,
    pool,
    redis,
    queues,
    gate,
    rateWaits,
    client,
    async keyStates() {
      return config.apiKeys.length > 0 ? gate.keyStates() : gate.keyStatesOf(await recentlySyncedKeys(pool));
    },
    async close() {
      await client.close().catch(() => undefined);
      // A Redis that is down would hold BullMQ's close forever: drop the connections instead.
      if (redis.status === 'ready') await queues.close().catch(() => undefined);
      else queues.disconnect();
      redis.disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}
