/**
 * The only reader of the environment: every setting, and the libpq defaults the database address
 * depends on (PGUSER, USER, PGHOST), is validated and resolved here with zod, once, at start.
 * Callers hand in the environment (the CLI entry passes its own), so nothing else touches
 * `process.env` and tests never mutate it.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors.ts';
import { keyFingerprint } from './key-fingerprint.ts';

export const DEFAULT_BASE_URL = 'https://api.sorsa.io';

/**
 * True for 127.0.0.0/8, ::1 and localhost: the only hosts allowed over plain http. Not a
 * `*.localhost` name: the resolver may send it to DNS, and the API key would travel in clear.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Validates a service base address: https, or http on loopback; no version segment, no query. */
export function parseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not quoted: an address that does not parse may still carry a user and password.
    throw new ConfigError('HARVEST_BASE_URL is not a URL (https://host[:port][/path])');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ConfigError(
      `HARVEST_BASE_URL must use https:// (plain http:// is accepted only for loopback hosts): ${url.origin}`,
    );
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError('HARVEST_BASE_URL must not carry credentials, a query or a fragment');
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/v[23]$/.test(path)) {
    throw new ConfigError('HARVEST_BASE_URL is the address without the version segment (drop the trailing /v2 or /v3)');
  }
  return `${url.origin}${path}`;
}

/**
 * REDIS_URL's addresses, checked when Redis is opened (a command that needs only Postgres does not
 * care), so a typo is named as one instead of being reported as a Redis that cannot be reached:
 * one address, or with HARVEST_REDIS_CLUSTER one per seed node, comma separated. An address is
 * what ioredis takes: `redis://` or `rediss://` URL, `host:port` (read as `redis://host:port`), a
 * port alone (on localhost), or (one Redis only) a Unix socket path; an empty list for a socket
 * path. Messages name an address by its position and never quote it: it may carry a password.
 */
export function redisAddresses(value: string, cluster: boolean): URL[] {
  if (!cluster && value.startsWith('/') && !value.startsWith('//')) return [];
  const parts = value.split(',').map((p) => p.trim()).filter((p) => p.length > 0);
  if (parts.length === 0) throw new ConfigError('REDIS_URL names no Redis (redis://host:port)');
  if (!cluster && value.includes(',')) {
    throw new ConfigError('REDIS_URL lists several addresses: set HARVEST_REDIS_CLUSTER=true for the seed nodes of a Redis Cluster');
  }
  return parts.map((part, i) => {
    const which = cluster ? `REDIS_URL's cluster node ${i + 1}` : 'REDIS_URL';
    // ioredis reads a bare number as a port on localhost, an address without a scheme as
    // redis://, but a path on one as a Unix socket. (A URL would read `6379` as a host of that name.)
    const schemeless = !/^[a-z][a-z0-9+.-]*:\/\//i.test(part);
    const withScheme = /^\d+$/.test(part) ? `redis://localhost:${part}` : schemeless ? `redis://${part.replace(/^\/\//, '')}` : part;
    let url: URL;
    try {
      url = new URL(withScheme);
    } catch {
      throw new ConfigError(`${which} is not an address (redis://[:password@]host:port[/db], or host:port)`);
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(`${which} must start with redis:// or rediss://`);
    if (url.hostname === '') throw new ConfigError(`${which} names no host (redis://host:port)`);
    try {
      decodeURIComponent(url.username);
      decodeURIComponent(url.password);
    } catch {
      throw new ConfigError(`${which} has a user or password that is not URL-encoded (write % as %25)`);
    }
    if (schemeless && url.pathname !== '' && url.pathname !== '/') {
      throw new ConfigError(`${which} has a path but no scheme, which reads as a socket: write redis://host:port/db`);
    }
    // The path is the database number: ioredis sends SELECT NaN for another, and the reply error
    // came as a stack trace from deep in the connection.
    if (!/^\/?\d*$/.test(url.pathname)) throw new ConfigError(`${which}'s path must be a database number (redis://host:port/0)`);
    // A Redis Cluster has database 0 only; ioredis's Cluster ignored the number, so another
    // deployment's database-3 queues would have landed in database 0.
    if (cluster && !/^\/?0*$/.test(url.pathname)) {
      throw new ConfigError(`${which} names database ${url.pathname.slice(1)}, but a Redis Cluster has database 0 only: drop the /${url.pathname.slice(1)}`);
    }
    return url;
  });
}

/**
 * The database address with libpq's defaults made explicit, so the pool, migrations and messages
 * need no environment. A URL without a user means PGUSER, else the operating-system user (pg alone
 * reads only $USER, which service managers and containers often leave unset); a URL without a host
 * means PGHOST. Both go in as query parameters when the URL has no host (a URL cannot carry a user
 * without one); pg reads query parameters as connection options.
 */
export function resolveDatabaseUrl(value: string, env: NodeJS.ProcessEnv): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('DATABASE_URL is not a URL (postgres://user:password@host:port/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://, not ${url.protocol}//`);
  }
  if (url.hostname === '' && !url.searchParams.has('host') && env.PGHOST) url.searchParams.set('host', env.PGHOST);
  if (url.username === '' && !url.searchParams.has('user')) {
    const user = env.PGUSER || env.USER || userInfo().username;
    if (url.hostname === '') url.searchParams.set('user', user);
    else url.username = encodeURIComponent(user);
  }
  return url.toString();
}

const keyList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const keys = (value ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k.length > 0);
    for (const key of keys) {
      if (/\s/.test(key)) {
        ctx.addIssue({ code: 'custom', message: 'an API key contains whitespace' });
        return z.NEVER;
      }
      // A key pasted with a zero-width space or a control character cannot be sent in a header:
      // every request failed as a transport error and was retried, never refused as a bad key.
      if (!/^[\x21-\x7e]+$/.test(key)) {
        ctx.addIssue({ code: 'custom', message: 'an API key contains a character that is not visible ASCII (a zero-width space, a control character?)' });
        return z.NEVER;
      }
    }
    if (new Set(keys).size !== keys.length) {
      ctx.addIssue({ code: 'custom', message: 'the same API key is listed twice' });
      return z.NEVER;
    }
    return keys;
  });

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/**
 * Node's timers take at most 2^31 − 1 ms (~24.8 days): a larger delay fires after 1 ms, and a
 * request deadline of 9,999,999,999 failed every attempt at once.
 */
const MAX_TIMER_MS = 2_147_483_647;
const durationMs = (fallback: number, min = 1) => z.coerce.number().int().min(min).max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days)`).default(fallback);
/** A whole number ≥ 0 written as one: a blank value is refused, not read as 0 (as coercion would). */
const nonNegativeInt = (fallback: number) =>
  z.string().trim().regex(/^\d{1,15}$/, 'expected a whole number').transform(Number).default(fallback);

const EnvSchema = z.object({
  HARVEST_BASE_URL: z.string().default(DEFAULT_BASE_URL),
  HARVEST_API_KEYS: keyList,
  DATABASE_URL: z.string().default('postgres://localhost:5432/harvest'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** REDIS_URL names a Redis Cluster (one or more seed nodes, comma separated): hash-tagged keys, a cluster client. */
  HARVEST_REDIS_CLUSTER: z.stringbool().default(false),
  HARVEST_RATE_PER_KEY: positiveInt(20),
  /** Quota units per key that backfills leave for watches. */
  HARVEST_WATCH_RESERVE: nonNegativeInt(200),
  /** BullMQ and limiter key prefix in Redis, so several deployments can share one Redis. */
  HARVEST_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'letters, digits and _.:- only')
    .default('harvest'),
  HARVEST_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HARVEST_REQUEST_TIMEOUT_MS: durationMs(30_000),
  /** Overall deadline of one attempt, headers and body: a trickling answer cannot hold a slot forever. */
  HARVEST_REQUEST_DEADLINE_MS: durationMs(60_000),
  /** Largest response body accepted (bytes); a larger one fails the attempt before it fills memory. */
  HARVEST_MAX_RESPONSE_BYTES: positiveInt(32 * 1024 * 1024),
  /** How long a silent worker's slices stay locked before another worker takes them over. */
  HARVEST_LOCK_DURATION_MS: durationMs(15_000, 1000),
  /** How long a key parked for quota (403) waits before one request re-checks it. */
  HARVEST_QUOTA_RECHECK_MS: durationMs(600_000, 100),
  /** Requests one page may cost (first attempt and retries of 5xx, time-outs, broken bodies) before its slice fails. */
  HARVEST_MAX_ATTEMPTS_PER_PAGE: positiveInt(6),
  /** Consecutive pages that bring no new id after which a walk ends with a note. */
  HARVEST_MAX_STALE_PAGES: positiveInt(10),
  /**
   * A job expected to spend more requests than this asks for --yes (a terminal: y/N) before it is
   * queued. A mention watch every 5 minutes (the interface's own example) is 8,640 requests a
   * month at one a pass: a script queues it as documented; every 4 minutes or less asks.
   */
  HARVEST_CONFIRM_ABOVE: positiveInt(10_000),
  /** Webhooks (comma separated) that receive notification events; https, or http on loopback. */
  HARVEST_NOTIFY_URL: z.string().optional(),
  /** A job with runnable slices and no progress for this long is shown as stalled. */
  HARVEST_STALLED_AFTER_MS: z.coerce.number().int().min(100).default(600_000),
});

export interface ApiKeyConfig {
  readonly key: string;
  readonly fingerprint: string;
}

export interface Config {
  readonly baseUrl: string;
  readonly apiKeys: readonly ApiKeyConfig[];
  /** DATABASE_URL with its user (and host, when it names none) filled in as libpq would pick them. */
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** Whether REDIS_URL lists the seed nodes of a Redis Cluster. */
  readonly redisCluster: boolean;
  readonly ratePerKey: number;
  readonly watchReserve: number;
  readonly redisPrefix: string;
  readonly logLevel: z.infer<typeof EnvSchema>['HARVEST_LOG_LEVEL'];
  /** Whether HARVEST_LOG_LEVEL was set (the CLI quiets info logs under a progress display otherwise). */
  readonly logLevelSet: boolean;
  readonly requestTimeoutMs: number;
  readonly requestDeadlineMs: number;
  readonly maxResponseBytes: number;
  readonly lockDurationMs: number;
  readonly quotaRecheckMs: number;
  readonly maxAttemptsPerPage: number;
  readonly maxStalePages: number;
  readonly confirmAbove: number;
  /** HARVEST_NOTIFY_URL, each validated; `fingerprint` names it in Postgres and logs (URLs carry secrets). */
  readonly notifyUrls: readonly NotifyTarget[];
  readonly stalledAfterMs: number;
}

export interface NotifyTarget {
  readonly url: string;
  readonly fingerprint: string;
}

/** Validates HARVEST_NOTIFY_URL: one or more webhooks, https or loopback http; errors never echo a URL's path or query. */
export function parseNotifyUrls(value: string | undefined): NotifyTarget[] {
  const urls = (value ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
  return urls.map((raw) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError('HARVEST_NOTIFY_URL holds something that is not a URL');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
      throw new ConfigError(`HARVEST_NOTIFY_URL must use https:// (plain http:// is accepted only for loopback hosts): ${url.protocol}//${url.host}`);
    }
    if (url.username || url.password || url.hash) throw new ConfigError('HARVEST_NOTIFY_URL must not carry credentials or a fragment');
    return { url: url.toString(), fingerprint: `n_${createHash('sha256').update(url.toString()).digest('hex').slice(0, 12)}` };
  });
}

/**
 * Validates an environment. Given the process's own, it first reads `.env` from the working
 * directory into it (existing variables win); any other object is taken as it is.
 */
export function loadConfig(env: NodeJS.ProcessEnv, options: { dotenv?: boolean } = {}): Config {
  if (options.dotenv !== false && env === process.env) {
    const file = resolve(process.cwd(), '.env');
    if (existsSync(file)) process.loadEnvFile(file);
  }
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? 'environment';
    throw new ConfigError(`invalid ${where}: ${issue?.message ?? 'malformed'}`);
  }
  const e = parsed.data;
  return {
    baseUrl: parseBaseUrl(e.HARVEST_BASE_URL),
    apiKeys: e.HARVEST_API_KEYS.map((key) => ({ key, fingerprint: keyFingerprint(key) })),
    databaseUrl: resolveDatabaseUrl(e.DATABASE_URL, env),
    redisUrl: e.REDIS_URL,
    redisCluster: e.HARVEST_REDIS_CLUSTER,
    ratePerKey: e.HARVEST_RATE_PER_KEY,
    watchReserve: e.HARVEST_WATCH_RESERVE,
    redisPrefix: e.HARVEST_REDIS_PREFIX,
    logLevel: e.HARVEST_LOG_LEVEL,
    logLevelSet: env.HARVEST_LOG_LEVEL !== undefined,
    requestTimeoutMs: e.HARVEST_REQUEST_TIMEOUT_MS,
    requestDeadlineMs: e.HARVEST_REQUEST_DEADLINE_MS,
    maxResponseBytes: e.HARVEST_MAX_RESPONSE_BYTES,
    lockDurationMs: e.HARVEST_LOCK_DURATION_MS,
    quotaRecheckMs: e.HARVEST_QUOTA_RECHECK_MS,
    maxAttemptsPerPage: e.HARVEST_MAX_ATTEMPTS_PER_PAGE,
    maxStalePages: e.HARVEST_MAX_STALE_PAGES,
    confirmAbove: e.HARVEST_CONFIRM_ABOVE,
    notifyUrls: parseNotifyUrls(e.HARVEST_NOTIFY_URL),
    stalledAfterMs: e.HARVEST_STALLED_AFTER_MS,
  };
}

/** For commands that call the service: fails with a clear message when no key is configured. */
export function requireApiKeys(config: Config): readonly ApiKeyConfig[] {
  if (config.apiKeys.length === 0) {
    throw new ConfigError('HARVEST_API_KEYS is not set: give one or more API keys, comma separated');
  }
  return config.apiKeys;
}
