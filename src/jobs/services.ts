/**
 * The long-lived resources a command or worker needs, opened once and closed together:
 * Postgres pool, Redis connection, queues, the shared limiter (gate) and the API client.
 * Unreachable Postgres or Redis fails here with one line saying which and how to start it.
 */
import { ApiClient, type AttemptRecord } from '../api-client/index.ts';
import type { Config } from '../config.ts';
import { AppError, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createPool, type Pool } from '../store/db.ts';
import { recordRequests } from '../store/jobs.ts';
import { collectAttempt } from './attempts.ts';
import { createRedisGate, type RedisGate } from './limiter/index.ts';
import { createRedis, HarvestQueues } from './queue.ts';
import { RateWaitTracker } from './rate-wait.ts';
import type { Redis } from 'ioredis';

export class ServiceUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.DB_UNAVAILABLE, message, options);
  }
}

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly pool: Pool;
  readonly redis: Redis;
  readonly queues: HarvestQueues;
  readonly gate: RedisGate;
  readonly rateWaits: RateWaitTracker;
  readonly client: ApiClient;
  close(): Promise<void>;
}

const redisHint = 'start it (`redis-server --daemonize yes`, your system service, or `docker compose up -d redis`)';
const pgHint = 'start it (`pg_ctlcluster 15 main start`, your system service, or `docker compose up -d postgres`)';

async function checkRedis(redis: Redis, url: string): Promise<void> {
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 3000).unref()),
    ]);
  } catch (error) {
    const where = (() => {
      try {
        return new URL(url).host;
      } catch {
        return 'REDIS_URL';
      }
    })();
    throw new ServiceUnavailableError(`cannot reach Redis at ${where}: ${redisHint}`, { cause: error });
  }
}

export interface OpenServicesOptions {
  /** Also told of every attempt (metrics). */
  onAttempt?: (a: AttemptRecord) => void;
}

export async function openServices(config: Config, logger: Logger, options: OpenServicesOptions = {}): Promise<Services> {
  const pool = createPool(config.databaseUrl, { max: 20 });
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    const reason = error instanceof AppError ? error.message : `cannot reach Postgres (${error instanceof Error ? error.message : String(error)})`;
    throw new ServiceUnavailableError(`${reason}; ${pgHint}`, { cause: error });
  }
  const redis = createRedis(config.redisUrl);
  redis.on('error', () => undefined);
  try {
    await checkRedis(redis, config.redisUrl);
  } catch (error) {
    redis.disconnect();
    await pool.end().catch(() => undefined);
    throw error;
  }
  const queues = new HarvestQueues(redis, config.redisPrefix, logger);
  const gate = createRedisGate({
    redis,
    prefix: `${config.redisPrefix}:limiter`,
    keys: config.apiKeys,
    ratePerKey: config.ratePerKey,
    watchReserve: config.watchReserve,
    recheckMs: config.quotaRecheckMs,
    logger,
  });
  // Requests made outside any page (quota syncs, estimates) are still accounted for.
  const orphan = (a: AttemptRecord) => {
    recordRequests(pool, [{ endpoint: a.endpoint, keyFingerprint: a.keyFingerprint, status: a.status, durationMs: a.durationMs, at: a.at }]).catch(
      (error: unknown) => logger.warn({ err: error }, 'could not record a request'),
    );
  };
  const rateWaits = new RateWaitTracker(redis, config.redisPrefix);
  const client = new ApiClient({
    baseUrl: config.baseUrl,
    gate: rateWaits.wrap(gate),
    timeoutMs: config.requestTimeoutMs,
    logger,
    onAttempt: (a) => {
      options.onAttempt?.(a);
      collectAttempt(a, orphan);
    },
  });
  return {
    config,
    logger,
    pool,
    redis,
    queues,
    gate,
    rateWaits,
    client,
    async close() {
      await client.close().catch(() => undefined);
      await queues.close().catch(() => undefined);
      redis.disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}
