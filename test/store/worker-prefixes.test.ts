/** One HARVEST_REDIS_PREFIX per database (migration 0014). */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { claimWorkerPrefix, PREFIX_STALE_MS } from '../../src/store/worker-prefixes.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { closedPort } from '../helpers/net.ts';
import { REDIS_URL, useHarness } from '../helpers/harness.ts';
import { deletePrefixKeysAt } from '../../src/jobs/redis-keys.ts';

describe('claimWorkerPrefix', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lets workers of one prefix start, refuses another while they were seen lately, and lets it in once they are gone', async () => {
    await claimWorkerPrefix(db.pool, 'alpha');
    await claimWorkerPrefix(db.pool, 'alpha');
    const refused = await claimWorkerPrefix(db.pool, 'beta').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(/^this database is worked with HARVEST_REDIS_PREFIX=alpha \(a worker was seen \d+ s ago\), not beta: one prefix per database/);
    // Neither of two other prefixes starting at once passes while alpha's workers are fresh.
    const both = await Promise.allSettled([claimWorkerPrefix(db.pool, 'gamma'), claimWorkerPrefix(db.pool, 'delta')]);
    expect(both.every((r) => r.status === 'rejected')).toBe(true);
    // alpha's last worker stopped longer ago than the stale time: beta may start, and now alpha may not.
    await db.pool.query(`UPDATE worker_prefixes SET last_seen_at = now() - make_interval(secs => $1::double precision / 1000 + 1)`, [PREFIX_STALE_MS]);
    await claimWorkerPrefix(db.pool, 'beta');
    await expect(claimWorkerPrefix(db.pool, 'alpha')).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('harvest worker with another prefix on the same database', () => {
  const h = useHarness();

  it('exits at once with one line and starts nothing', async () => {
    await claimWorkerPrefix(h.services.pool, h.env.HARVEST_REDIS_PREFIX!);
    const other = `${h.env.HARVEST_REDIS_PREFIX}-other`;
    const run = await runCli(['worker'], { ...h.env, HARVEST_REDIS_PREFIX: other }).finally(() => deletePrefixKeysAt(REDIS_URL, other));
    expect(run.code).not.toBe(0);
    expect(run.err.split('\n')).toHaveLength(1);
    expect(run.err).toMatch(/^harvest: this database is worked with HARVEST_REDIS_PREFIX=/);
  });

  it('a job submitted with --wait is refused before it is queued', async () => {
    await claimWorkerPrefix(h.services.pool, h.env.HARVEST_REDIS_PREFIX!);
    const other = `${h.env.HARVEST_REDIS_PREFIX}-other`;
    const jobs = async () => Number((await h.services.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM jobs')).rows[0]!.n);
    const before = await jobs();
    const run = await runCli(['user', 'newsdesk', '--wait'], { ...h.env, HARVEST_REDIS_PREFIX: other }).finally(() => deletePrefixKeysAt(REDIS_URL, other));
    expect(run.code).toBe(1);
    expect(run.err.split('\n')).toHaveLength(1);
    expect(run.err).toMatch(/^harvest: this database is worked with HARVEST_REDIS_PREFIX=/);
    expect(run.out).toBe('');
    expect(await jobs()).toBe(before);
  });

  it('with --metrics-port, closes its metrics server too (it kept the process alive after the refusal)', async () => {
    await claimWorkerPrefix(h.services.pool, h.env.HARVEST_REDIS_PREFIX!);
    const other = `${h.env.HARVEST_REDIS_PREFIX}-other`;
    const port = await closedPort();
    const run = await runCli(['worker', '--metrics-port', String(port)], { ...h.env, HARVEST_REDIS_PREFIX: other }).finally(() =>
      deletePrefixKeysAt(REDIS_URL, other),
    );
    expect(run.code).not.toBe(0);
    expect(run.err).toMatch(/^harvest: this database is worked with HARVEST_REDIS_PREFIX=/);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
