/**
 * Prometheus metrics of one worker process, on a registry of their own (never prom-client's
 * global one, so tests and several harvesters in one process do not share counters).
 *
 * Counters are fed by two hooks the worker already has: the client's per-attempt record
 * (`observeAttempt`) and the slice runner's page hook (`observePage`). Gauges that describe
 * shared state (quota, parked keys, job counts, slice lag) are read from Redis and Postgres at
 * scrape time, once per scrape, so an idle worker costs nothing and every replica reports the
 * same values (aggregate them with max(), not sum()).
 *
 * Labels stay low-cardinality on purpose: endpoint route (not path), status, key FINGERPRINT
 * (never the key), job state. Job and slice ids are not labels: they grow without bound.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AttemptRecord } from '../api-client/index.ts';
import { hostGuard } from '../host-guard.ts';
import type { Logger } from '../logger.ts';
import { JobStatus } from '../store/states.ts';
import type { KeyState } from './limiter/index.ts';

export interface MetricSources {
  keyStates(): Promise<KeyState[]>;
  jobCounts(): Promise<Record<string, number>>;
  /** Seconds since the least recently updated runnable slice moved; null when none is runnable. */
  sliceLagSeconds(): Promise<number | null>;
  /** Jobs with runnable slices and no progress for HARVEST_STALLED_AFTER_MS (jobHealth); optional. */
  stalledJobs?(): Promise<number>;
}

export interface HarvestMetricsOptions {
  /** Process metrics (CPU, memory, event-loop lag, GC) under their standard names; default true. */
  defaultMetrics?: boolean;
  logger?: Logger;
}

/** Request latency buckets in seconds: the service answers in ~0.1-2 s, time-outs sit at 30 s. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

export class HarvestMetrics {
  readonly registry = new Registry();
  readonly #logger: Logger | undefined;
  #sources: MetricSources | null = null;

  readonly #requests = new Counter({
    name: 'harvest_requests_total',
    help: 'Requests sent to the service (each attempt, retries included), by endpoint route, HTTP status (0: no response) and key fingerprint.',
    labelNames: ['endpoint', 'status', 'key'] as const,
    registers: [this.registry],
  });
  readonly #rateLimited = new Counter({
    name: 'harvest_rate_limited_total',
    help: 'Requests answered 429 (per-second rate exceeded), by key fingerprint.',
    labelNames: ['key'] as const,
    registers: [this.registry],
  });
  readonly #givenBack = new Counter({
    name: 'harvest_grants_given_back_total',
    help: 'Limiter grants given back unsent: the process could not send them within their slot (an overloaded worker), or the connection to the service never opened.',
    labelNames: ['key'] as const,
    registers: [this.registry],
  });
  readonly #duration = new Histogram({
    name: 'harvest_request_duration_seconds',
    help: 'Time to the full response of each attempt, by endpoint route.',
    labelNames: ['endpoint'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly #pages = new Counter({ name: 'harvest_pages_total', help: 'Pages committed to Postgres.', registers: [this.registry] });
  readonly #tweets = new Counter({
    name: 'harvest_tweets_written_total',
    help: 'Tweets on committed pages (upserted; includes tweets already stored).',
    registers: [this.registry],
  });
  readonly #newTweets = new Counter({
    name: 'harvest_tweets_new_total',
    help: 'Tweets on committed pages that were new to their job.',
    registers: [this.registry],
  });
  readonly #users = new Counter({
    name: 'harvest_users_written_total',
    help: 'Standalone users (members, followers, profiles) on committed pages.',
    registers: [this.registry],
  });
  readonly #quota = new Gauge({
    name: 'harvest_quota_remaining',
    help: 'Quota units left per key fingerprint, as the shared limiter counts them (absent before the first usage sync).',
    labelNames: ['key'] as const,
    registers: [this.registry],
  });
  readonly #parked = new Gauge({
    name: 'harvest_key_parked',
    help: '1 while a key is parked (quota spent, waiting for renewal), else 0.',
    labelNames: ['key'] as const,
    registers: [this.registry],
  });
  readonly #disabled = new Gauge({
    name: 'harvest_key_disabled',
    help: '1 when a key was disabled (rejected as unauthorised), else 0.',
    labelNames: ['key'] as const,
    registers: [this.registry],
  });
  readonly #jobs = new Gauge({
    name: 'harvest_jobs',
    help: 'Jobs by state (every state is reported, 0 included, so alerts need no absent()).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly #lag = new Gauge({
    name: 'harvest_slice_lag_seconds',
    help: 'Seconds since the least recently updated runnable slice (pending/running, job queued/running) last moved; 0 when none is runnable.',
    registers: [this.registry],
  });
  readonly #stalled = new Gauge({
    name: 'harvest_jobs_stalled',
    help: 'Jobs with runnable slices and no progress for HARVEST_STALLED_AFTER_MS (no live worker, or one stuck); parked for quota or waiting for rate is not stalled. Alert on > 0.',
    registers: [this.registry],
  });
  readonly #sourceErrors = new Counter({
    name: 'harvest_metrics_source_errors_total',
    help: 'Scrapes whose gauge source failed (Redis or Postgres unreachable); those gauges are left out of that scrape.',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  constructor(options: HarvestMetricsOptions = {}) {
    this.#logger = options.logger;
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  observeAttempt(a: AttemptRecord): void {
    this.#requests.inc({ endpoint: a.endpoint, status: String(a.status), key: a.keyFingerprint });
    if (a.status === 429) this.#rateLimited.inc({ key: a.keyFingerprint });
    this.#duration.observe({ endpoint: a.endpoint }, a.durationMs / 1000);
  }

  observeGiveBack(fingerprint: string): void {
    this.#givenBack.inc({ key: fingerprint });
  }

  observePage(p: { jobId: string; sliceId: string; tweets: number; users: number; newTweets: number }): void {
    this.#pages.inc();
    this.#tweets.inc(p.tweets);
    this.#users.inc(p.users);
    this.#newTweets.inc(p.newTweets);
  }

  bindCollectors(sources: MetricSources): void {
    this.#sources = sources;
  }

  /** The exposition text; reads the bound sources first (each failure only drops its own gauges). */
  async metricsText(): Promise<string> {
    if (this.#sources) await this.#collect(this.#sources);
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  async #collect(sources: MetricSources): Promise<void> {
    const [keys, jobs, lag, stalled] = await Promise.allSettled([
      sources.keyStates(),
      sources.jobCounts(),
      sources.sliceLagSeconds(),
      sources.stalledJobs ? sources.stalledJobs() : Promise.resolve(null),
    ]);
    // Reset and refill synchronously, so a concurrent scrape never sees a half-written set and a
    // key removed from the configuration disappears.
    this.#quota.reset();
    this.#parked.reset();
    this.#disabled.reset();
    this.#jobs.reset();
    this.#lag.reset();
    this.#stalled.reset();
    if (keys.status === 'fulfilled') {
      for (const k of keys.value) {
        if (k.remaining !== null) this.#quota.set({ key: k.fingerprint }, k.remaining);
        this.#parked.set({ key: k.fingerprint }, k.parkedUntil ? 1 : 0);
        this.#disabled.set({ key: k.fingerprint }, k.disabled ? 1 : 0);
      }
    } else this.#failed('keys', keys.reason);
    if (jobs.status === 'fulfilled') {
      for (const state of Object.values(JobStatus)) this.#jobs.set({ state }, 0);
      for (const [state, n] of Object.entries(jobs.value)) this.#jobs.set({ state }, n);
    } else this.#failed('jobs', jobs.reason);
    if (lag.status === 'fulfilled') this.#lag.set(lag.value ?? 0);
    else this.#failed('slices', lag.reason);
    if (stalled.status === 'fulfilled') {
      if (stalled.value !== null) this.#stalled.set(stalled.value);
    } else this.#failed('stalled', stalled.reason);
  }

  #failed(source: string, error: unknown): void {
    this.#sourceErrors.inc({ source });
    this.#logger?.warn({ err: error, source }, 'metrics source failed');
  }
}

export interface MetricsServer {
  /** The bound port (the OS-chosen one when 0 was asked). */
  port: number;
  close(): Promise<void>;
}

/**
 * Serves GET /metrics. Binds loopback unless told otherwise: pass host '0.0.0.0' where a
 * Prometheus in another container or machine scrapes it.
 */
export async function startMetricsServer(
  port: number,
  metrics: HarvestMetrics,
  host = '127.0.0.1',
  /** Other routes served beside /metrics (the dashboard); resolves false for a path it does not serve. */
  other?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>,
): Promise<MetricsServer> {
  // On loopback, /metrics answers only a loopback Host, as the dashboard beside it does (DNS
  // rebinding: a page elsewhere read key fingerprints, their quota and job counts).
  const hostAllowed = hostGuard(host);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' && other && (await other(req, res))) return;
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found; metrics are at /metrics\n');
      return;
    }
    if (!hostAllowed(req)) {
      res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics answer only to a loopback host name on a loopback address\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    const body = await metrics.metricsText();
    res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('metrics collection failed\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A scraper's keep-alive connection would otherwise hold close() open until it times out.
        server.closeAllConnections();
      }),
  };
}
