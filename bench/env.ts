/**
 * What the system benches share: a fresh migrated database and a random Redis prefix (both removed
 * by close()), the simulator in this process, services pointed at them, and real `harvest worker`
 * child processes with the same environment the tests give them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.ts';
import { planContext } from '../src/jobs/harvester.ts';
import { deletePrefixKeysAt } from '../src/jobs/redis-keys.ts';
import { openServices, type Services } from '../src/jobs/services.ts';
import { submitJob, type SubmitInput } from '../src/jobs/submit.ts';
import { silentLogger } from '../src/logger.ts';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../src/simulator/index.ts';
import { migrate } from '../src/store/migrate.ts';

export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const RATE_PER_KEY = 20;
const BIN = fileURLToPath(new URL('../bin/harvest.js', import.meta.url));

export interface BenchEnv {
  sim: RunningSimulator;
  config: Config;
  services: Services;
  /** Environment for a child `harvest` process pointed at the same simulator, database and prefix. */
  env: Record<string, string>;
  submit(input: SubmitInput): Promise<string>;
  close(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, application_name: 'harvest-bench' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** `keys`: how many API keys the simulator accepts and the workers use (each RATE_PER_KEY req/s). */
export async function startBenchEnv(simulator: SimulatorOptions, options: { keys?: number } = {}): Promise<BenchEnv> {
  const keys = Array.from({ length: Math.max(1, options.keys ?? 1) }, (_, i) => `bench-key-${i + 1}`);
  const sim = await startSimulator({ keys: keys.map((key) => ({ key, quota: 10_000_000 })), ratePerKey: RATE_PER_KEY, ...simulator });
  const name = `harvest_bench_${randomBytes(5).toString('hex')}`;
  const prefix = `hbench_${randomBytes(5).toString('hex')}`;
  const url = databaseUrl(name);
  let services: Services | null = null;
  const close = async (): Promise<void> => {
    if (services) {
      await services.queues.obliterate().catch(() => undefined);
      await services.close();
    }
    await deletePrefixKeysAt(REDIS_URL, prefix);
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    await sim.close();
  };
  try {
    await admin((c) => c.query(`CREATE DATABASE "${name}"`));
    await migrate(url);
    const env: Record<string, string> = {
      HARVEST_BASE_URL: sim.url,
      HARVEST_API_KEYS: keys.join(','),
      DATABASE_URL: url,
      REDIS_URL,
      HARVEST_REDIS_PREFIX: prefix,
      HARVEST_RATE_PER_KEY: String(RATE_PER_KEY),
      HARVEST_LOG_LEVEL: 'silent',
    };
    const config = loadConfig(env, { dotenv: false });
    const opened = await openServices(config, silentLogger);
    services = opened;
    return {
      sim,
      config,
      services: opened,
      env,
      async submit(input) {
        const ctx = await planContext(opened);
        const { jobId } = await submitJob({ pool: opened.pool, queues: opened.queues, budgets: opened.gate, planContext: ctx }, input);
        return jobId;
      },
      close,
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/** A `harvest worker` child process (default concurrency, as an operator would run it, unless `args` say). */
export function startWorker(env: Record<string, string>, args: readonly string[] = []): ChildProcess {
  // BENCH_WORKER_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the workers.
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter((a) => a.length > 0);
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'worker', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-2000);
  });
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGKILL') process.stderr.write(`worker ${child.pid} exited ${code ?? signal}: ${tail}\n`);
  });
  return child;
}

export function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Resident set of a process in MB, from /proc (Linux). */
export function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** User + system CPU a process has used so far, in ms, from /proc/<pid>/stat (Linux). */
export function cpuMsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100;
  } catch {
    return null;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const round = (n: number, digits = 3): number => Number(n.toFixed(digits));
