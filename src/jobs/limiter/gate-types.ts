/**
 * What the shared limiter (redis-gate.ts) is given and gives back: its options and the shapes of
 * grants, usage answers and quota syncs that callers (services, CLI, tests) see.
 */
import type { Grant } from '../../api-client/gate.ts';
import type { ApiKeyConfig } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import type { RedisConnection } from '../redis-keys.ts';

export interface RedisGateOptions {
  /** A single Redis or a Cluster: every key one script touches shares a hash tag. */
  redis: RedisConnection;
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
  /** Told of every grant given back unused (metrics: a process too loaded to send on time, or no connection to the service). */
  onGiveBack?: (fingerprint: string) => void;
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
  readonly sendBy: number;
  /** The key's consecutive 429s when granted: with none, a clean answer is not reported to Redis. */
  readonly strikes: number;
}

/** What a gate has asked of Redis since it was made: the cost of its grants in Lua calls. */
export interface LimiterStats {
  /** Acquire script runs (grants, waits and refusals alike). */
  acquireCalls: number;
  /** Report script runs. */
  reportCalls: number;
  /** Reports answered without Redis (clean answer on a key without strikes, 5xx, no answer). */
  reportsSkipped: number;
  /** Grants handed out. */
  grants: number;
  /** Grants given back unused (their request would have gone out too late, or its connection never opened). */
  givenBack: number;
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
