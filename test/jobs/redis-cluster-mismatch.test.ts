/**
 * HARVEST_REDIS_CLUSTER not matching REDIS_URL: the refusal gives the real reason, before anything
 * changes. The flag on a single Redis, or a cluster node's refused password, said "cannot reach
 * Redis (timed out): start it"; a cluster node taken for one Redis answered CROSSSLOT mid-command.
 * The cluster node here is one `redis-server --cluster-enabled yes` on a free loopback port
 * (no slots needed: the refusals come before any keyed command), removed afterwards.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, redisAddresses } from '../../src/config.ts';
import { openServices } from '../../src/jobs/services.ts';
import { silentLogger } from '../../src/logger.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { REDIS_URL } from '../helpers/redis.ts';
import { closedPort as freePort } from '../helpers/net.ts';

const hasRedisServer = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

async function refusal(db: TestDatabase, env: Record<string, string>): Promise<string> {
  const config = loadConfig({ DATABASE_URL: db.url, HARVEST_REDIS_PREFIX: 'mismatch', HARVEST_LOG_LEVEL: 'silent', ...env }, { dotenv: false });
  let services: Awaited<ReturnType<typeof openServices>>;
  try {
    services = await openServices(config, silentLogger, { keyless: true });
  } catch (error) {
    return (error as Error).message;
  }
  await services.close();
  throw new Error('openServices did not refuse');
}

describe('HARVEST_REDIS_CLUSTER against REDIS_URL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('refuses a database number other than 0 with the cluster flag', () => {
    // ioredis's Cluster ignored it: database 0, another deployment's queues.
    expect(() => redisAddresses('redis://127.0.0.1:7000/3', true)).toThrow(/names database 3, but a Redis Cluster has database 0 only/);
    expect(() => redisAddresses('redis://127.0.0.1:7000,redis://127.0.0.1:7001/2', true)).toThrow(/cluster node 2 names database 2/);
    expect(redisAddresses('redis://127.0.0.1:7000/0', true)).toHaveLength(1);
    expect(redisAddresses('redis://127.0.0.1:6379/3', false)).toHaveLength(1);
  });

  it('names a single Redis taken for a cluster, not "timed out"', async () => {
    const message = await refusal(db, { REDIS_URL, HARVEST_REDIS_CLUSTER: 'true' });
    expect(message).toMatch(/is not a Redis Cluster \(ERR This instance has cluster support disabled\): unset HARVEST_REDIS_CLUSTER/);
    expect(message).not.toContain('timed out');
  });

  describe.skipIf(!hasRedisServer)('a cluster node', () => {
    let node: ChildProcess | undefined;
    let port = 0;
    let dir = '';
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'harvest-cluster-node-'));
      port = await freePort();
      node = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--dir', dir, '--save', '', '--appendonly', 'no', '--requirepass', 'right'],
        { stdio: 'ignore' },
      );
      for (let i = 0; i < 100 && spawnSync('redis-cli', ['-p', String(port), '-a', 'right', '--no-auth-warning', 'ping']).stdout?.toString().trim() !== 'PONG'; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    afterAll(() => {
      node?.kill('SIGKILL');
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('refuses a cluster node taken for one Redis, naming HARVEST_REDIS_CLUSTER', async () => {
      const message = await refusal(db, { REDIS_URL: `redis://:right@127.0.0.1:${port}` });
      expect(message).toBe('REDIS_URL is a Redis Cluster node: set HARVEST_REDIS_CLUSTER=true');
    });

    it("gives a cluster's refused password as such, not \"timed out\"", async () => {
      const message = await refusal(db, { REDIS_URL: `redis://:wrong@127.0.0.1:${port}`, HARVEST_REDIS_CLUSTER: 'true' });
      expect(message).toMatch(/refused the credentials \(WRONGPASS .*\): check the user and password in REDIS_URL/);
      expect(message).not.toContain('wrong');
    });
  });
});
