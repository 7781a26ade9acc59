/**
 * Redis Cluster: a three-master cluster on loopback ports (started here, removed afterwards, also
 * on failure) carries a search backfill run by two `harvest worker` processes. BullMQ's queues
 * live under the hash tag `{<prefix>}` and every limiter script touches keys of one slot (the tag
 * `{<ns>}`); if either were wrong the cluster would answer CROSSSLOT and the run would not finish.
 * The run must store the exact set and keep the key's rate (no second above it, no 429).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ErrorCode } from '../../src/errors.ts';
import { limiterLayout } from '../../src/jobs/limiter/key-layout.ts';
import { clusterSeeds } from '../../src/jobs/queue.ts';
import { keyNamespaceFor } from '../../src/jobs/limiter/namespace.ts';
import { createWorld } from '../../src/simulator/world/index.ts';
import { jobTweetIds, startHarness, type Harness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { deadWorker, exited, freePort, isEnd, sleep, startWorker, stopWorker, waitForJob, type WorkerProcess } from './support.ts';

const RATE = 20;
const hasRedisServer = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
/** A skipped run says why in its name (vitest prints it), so no one mistakes it for a pass. */
const SUITE = hasRedisServer ? 'Redis Cluster' : 'Redis Cluster: SKIPPED, redis-server is not installed (apt-get install redis-server)';

interface OwnCluster {
  ports: number[];
  /** REDIS_URL for a cluster: the seed nodes, comma separated. */
  url: string;
  close(): Promise<void>;
}

async function clusterState(port: number): Promise<string> {
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return /cluster_state:(\w+)/.exec(await probe.cluster('INFO'))?.[1] ?? 'unknown';
  } catch {
    return 'unreachable';
  } finally {
    probe.disconnect();
  }
}

async function waitUntil(what: string, ok: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Three masters, no replicas, nothing on disk but their node files in a temp dir. */
async function startCluster(): Promise<OwnCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'harvest-cluster-'));
  const procs: ChildProcess[] = [];
  const close = async () => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => exited(p)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) {
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`)];
      args.push('--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir);
      procs.push(spawn('redis-server', args, { stdio: 'ignore' }));
    }
    for (const port of ports) await waitUntil(`redis-server on ${port}`, async () => (await clusterState(port)) !== 'unreachable', 10_000);
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    for (const port of ports) await waitUntil(`cluster_state:ok on ${port}`, async () => (await clusterState(port)) === 'ok', 20_000);
    return { ports, url: ports.map((p) => `redis://127.0.0.1:${p}`).join(','), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The most requests the simulator saw in any one wall-clock second (the service's fixed window). */
function busiestSecond(h: Harness): number {
  const perSecond = new Map<number, number>();
  for (const r of h.sim.control.requestLog()) {
    if (!r.path.startsWith('/v3/')) continue;
    const s = Math.floor(r.at / 1000);
    perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  }
  return Math.max(0, ...perSecond.values());
}

describe.skipIf(!hasRedisServer)(SUITE, () => {
  let cluster: OwnCluster | undefined;
  let h: Harness | undefined;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    cluster = await startCluster();
    const world = createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } });
    h = await startHarness({
      simulator: { world, latencyMs: [40, 160] },
      rate: RATE,
      env: { REDIS_URL: cluster.url, HARVEST_REDIS_CLUSTER: 'true' },
    });
  }, 60_000);
  afterAll(async () => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
    await Promise.all(workers.map((w) => exited(w.proc)));
    await h?.close().catch(() => undefined);
    await cluster?.close();
  });

  it('two workers run a backfill through a three-master cluster: exact set, the rate kept, no 429', { timeout: 90_000 }, async () => {
    const harness = h!;
    expect(harness.services.redis).toBeInstanceOf(Cluster);
    const expected = expectedSearchIds(harness.sim.world, 'lang:en since:2026-10-01 until:2026-10-08');
    expect(expected.length).toBeGreaterThan(500);
    const jobId = await harness.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-08' } });
    workers.push(startWorker(harness.env, 6), startWorker(harness.env, 6));
    const giveUp = () => workers.map(deadWorker).find((reason) => reason !== null) ?? null;
    const done = await waitForJob(harness.services.pool, jobId, isEnd, 60_000, { giveUp });
    // A worker that does not stop within 30 s is killed (null): its last lines say where it hung.
    for (const w of workers.splice(0)) expect(await stopWorker(w), w.output().trim().split('\n').slice(-30).join('\n')).toBe(0);

    expect(done.status).toBe('completed');
    expect(await jobTweetIds(harness, jobId)).toEqual(expected);
    expect(harness.sim.control.stats().byStatus['429'] ?? 0).toBe(0);
    expect(busiestSecond(harness)).toBeLessThanOrEqual(RATE);

    // The state really lives on the cluster, in the slots its tags name: BullMQ's queue under
    // {<prefix>} and the limiter's key state under {<ns>} (a key the cluster did not route there
    // could not be read back through it).
    const redis = harness.services.redis as Cluster;
    const names = limiterLayout(`${harness.prefix}:limiter`, keyNamespaceFor(harness.config.baseUrl));
    const state = await redis.hgetall(names.key(harness.config.apiKeys[0]!.fingerprint).state);
    expect(Number(state.granted)).toBeGreaterThanOrEqual(done.requests);
    expect(await redis.exists(names.epoch)).toBe(1);
    expect(await redis.exists(`{${harness.prefix}}:backfill:meta`)).toBe(1);
  });
});

describe('Redis Cluster configuration', () => {
  it('reads the seed nodes from REDIS_URL, comma separated, with the credentials of any', () => {
    expect(clusterSeeds('redis://10.0.0.1:7000, redis://:s3cret@10.0.0.2:7001,redis://10.0.0.3')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: '10.0.0.3', port: 6379 },
      ],
      password: 's3cret',
      tls: false,
    });
    // rediss:// on a seed: TLS for every node; an IPv6 seed without its brackets.
    expect(clusterSeeds('rediss://:pw@[::1]:7000,redis://10.0.0.2:7001')).toMatchObject({
      nodes: [
        { host: '::1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      tls: true,
    });
    // A port alone is one on localhost, as ioredis reads it (a URL would read 7000 as a host of that name).
    expect(clusterSeeds('7000,7001').nodes).toEqual([
      { host: 'localhost', port: 7000 },
      { host: 'localhost', port: 7001 },
    ]);
  });

  it('refuses a malformed node in one line that names its position, not its text (it may hold a password)', () => {
    let error: unknown;
    try {
      clusterSeeds('redis://10.0.0.1:7000,redis://:s3cret@:::garbage');
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: ErrorCode.CONFIG_INVALID, message: "REDIS_URL's cluster node 2 is not an address (redis://[:password@]host:port[/db], or host:port)" });
    expect(() => clusterSeeds(' , ')).toThrow(/names no Redis/);
    expect(() => clusterSeeds('redis://10.0.0.1:7000,http://10.0.0.2:7000')).toThrow("REDIS_URL's cluster node 2 must start with redis:// or rediss://");
  });

  it('HARVEST_REDIS_CLUSTER is a boolean: "false" is false, anything else unparsable is refused', () => {
    expect(loadConfig({ HARVEST_REDIS_CLUSTER: 'false' }, { dotenv: false }).redisCluster).toBe(false);
    expect(loadConfig({ HARVEST_REDIS_CLUSTER: 'true' }, { dotenv: false }).redisCluster).toBe(true);
    expect(loadConfig({}, { dotenv: false }).redisCluster).toBe(false);
    expect(() => loadConfig({ HARVEST_REDIS_CLUSTER: 'maybe' }, { dotenv: false })).toThrow(/HARVEST_REDIS_CLUSTER/);
  });
});
