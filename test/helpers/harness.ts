/**
 * Everything a jobs test needs, isolated: the simulator on a loopback port, a fresh migrated
 * database, a random Redis prefix, and the services the CLI and worker use, all pointed at them.
 * close() removes every Redis key of the prefix and drops the database.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { Harvester, type HarvesterOptions } from '../../src/jobs/harvester.ts';
import { limiterLayout } from '../../src/jobs/limiter/key-layout.ts';
import { keyNamespaceFor } from '../../src/jobs/limiter/namespace.ts';
import { deletePrefixKeysAt } from '../../src/jobs/redis-keys.ts';
import { openServices, type Services } from '../../src/jobs/services.ts';
import { planContext } from '../../src/jobs/harvester.ts';
import { submitJob, type SubmitInput } from '../../src/jobs/submit.ts';
import { silentLogger } from '../../src/logger.ts';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/index.ts';
import { createWorld } from '../../src/simulator/world/index.ts';
import { jobSnapshot, type JobSnapshot } from '../../src/store/job-status.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { REDIS_URL } from './redis.ts';

export { REDIS_URL };

export interface Harness {
  sim: RunningSimulator;
  db: TestDatabase;
  config: Config;
  services: Services;
  prefix: string;
  /** Environment for a child `harvest` process pointed at the same simulator, database and prefix. */
  env: Record<string, string>;
  submit(input: SubmitInput): Promise<string>;
  /** Runs an in-process worker until the job reaches one of `until` (default: an end state). */
  runUntil(jobId: string, options?: { until?: string[]; timeoutMs?: number; harvester?: Partial<HarvesterOptions> }): Promise<JobSnapshot>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  simulator?: SimulatorOptions;
  keys?: string[];
  /**
   * One key of this harness's own (random) instead of `keys`: a key's limiter state (rate slot,
   * quota) lives outside the prefix, shared by every harness that sends the same key to the same
   * origin, and outlives it; this one's is removed on close.
   */
  ownKey?: boolean;
  rate?: number;
  /** Extra environment on top of the harness's own (it wins over the defaults). */
  env?: Record<string, string>;
}

/**
 * What the worker-process tests (several workers, kills, terminated connections) run against:
 * 40,000 tweets, so a week's search is a few hundred pages, served with 40–160 ms latency.
 */
export function busyWorldOptions(): HarnessOptions {
  return { simulator: { world: createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } }), latencyMs: [40, 160] } };
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const keys = options.ownKey ? [`own-${randomBytes(6).toString('hex')}`] : (options.keys ?? ['test-key-1']);
  const sim = await startSimulator({ keys, seed: 7, scale: 'small', ...options.simulator });
  const db = await createTestDatabase();
  const prefix = `htest_${randomBytes(5).toString('hex')}`;
  const env: Record<string, string> = {
    HARVEST_BASE_URL: sim.url,
    HARVEST_API_KEYS: keys.join(','),
    DATABASE_URL: db.url,
    REDIS_URL,
    HARVEST_REDIS_PREFIX: prefix,
    HARVEST_RATE_PER_KEY: String(options.rate ?? 20),
    HARVEST_LOG_LEVEL: 'silent',
    HARVEST_LOCK_DURATION_MS: '3000',
    ...options.env,
  };
  const config = loadConfig(env, { dotenv: false });
  const services = await openServices(config, silentLogger);
  const harness: Harness = {
    sim,
    db,
    config,
    services,
    prefix,
    env,
    async submit(input) {
      const { jobId } = await submitJob(
        { pool: services.pool, queues: services.queues, budgets: services.gate, planContext: await planContext(services) },
        input,
      );
      return jobId;
    },
    async runUntil(jobId, o = {}) {
      const until = new Set(o.until ?? ['completed', 'failed', 'cancelled', 'paused', 'paused_quota']);
      const harvester = new Harvester(services, { concurrency: 8, quotaSyncMs: 3_600_000, ...o.harvester });
      await harvester.start();
      const deadline = Date.now() + (o.timeoutMs ?? 20_000);
      try {
        for (;;) {
          const snap = await jobSnapshot(services.pool, jobId);
          if (snap && until.has(snap.status)) return snap;
          if (Date.now() > deadline) throw new Error(`job ${jobId} still ${snap?.status} after ${o.timeoutMs ?? 20_000} ms`);
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await harvester.stop();
      }
    },
    async close() {
      await services.queues.obliterate().catch(() => undefined);
      if (options.ownKey) {
        const layout = limiterLayout('unused', keyNamespaceFor(config.baseUrl));
        for (const k of config.apiKeys) await services.redis.del(layout.key(k.fingerprint).state, layout.key(k.fingerprint).quota).catch(() => undefined);
      }
      await services.close();
      await deletePrefixKeysAt(REDIS_URL, prefix);
      await db.drop();
      await sim.close();
    },
  };
  return harness;
}

/** Ids (as strings) of the tweets a job found, sorted. */
export async function jobTweetIds(h: Harness, jobId: string): Promise<string[]> {
  const { rows } = await h.services.pool.query<{ id: string }>(
    'SELECT tweet_id::text AS id FROM job_tweets WHERE job_id = $1::bigint ORDER BY tweet_id',
    [jobId],
  );
  return rows.map((r) => r.id);
}

/**
 * One harness for the enclosing describe block (or file): started before its tests, closed after
 * them (after the block's own later-registered afterAll hooks, which vitest runs first). The
 * returned object stands for the started harness; using it outside a test or hook throws.
 * `options` may be a function, so costly parts (a generated world) are built in beforeAll.
 */
export function useHarness(options: HarnessOptions | (() => HarnessOptions) = {}): Harness {
  let current: Harness | undefined;
  beforeAll(async () => {
    current = await startHarness(typeof options === 'function' ? options() : options);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as Harness, {
    get(_target, property) {
      if (current === undefined) throw new Error(`harness.${String(property)} used outside the tests of its describe block`);
      return Reflect.get(current, property);
    },
  });
}
