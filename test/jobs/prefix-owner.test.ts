/**
 * One database per HARVEST_REDIS_PREFIX (migration 0025, src/jobs/prefix-owner.ts). Job ids start
 * at 1 in every database, so two databases on one prefix shared job 1's budget: a job asked for 40
 * requests got 2 and "completed". A process that would work the queue of a second database on a
 * prefix is refused with one line, before anything is queued.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { silentLogger } from '../../src/logger.ts';
import { prefixOwnerKey } from '../../src/jobs/prefix-owner.ts';
import { openServices } from '../../src/jobs/services.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { useHarness } from '../helpers/harness.ts';

describe('two databases on one HARVEST_REDIS_PREFIX', () => {
  const a = useHarness();
  let other: TestDatabase;
  beforeAll(async () => {
    other = await createTestDatabase();
  });
  afterAll(async () => {
    await other?.drop();
  });

  const jobsIn = async (db: TestDatabase) => Number((await db.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM jobs')).rows[0]!.n);

  it('refuses the second database with one line naming the prefix, queueing nothing', async () => {
    const owner = await a.services.redis.get(prefixOwnerKey(a.prefix));
    const { rows } = await a.services.pool.query<{ id: string }>('SELECT id::text FROM database_identity');
    expect(owner).toBe(rows[0]!.id);

    const env = { ...a.env, DATABASE_URL: other.url };
    const refused = await openServices(loadConfig(env, { dotenv: false }), silentLogger).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(new RegExp(`^HARVEST_REDIS_PREFIX=${a.prefix} is used by another database \\(.+\\): give each database its own HARVEST_REDIS_PREFIX`));

    const run = await runCli(['search', 'lang:en', '--since', '2026-10-01', '--until', '2026-10-08', '--max-requests', '40', '--yes'], env);
    expect(run.code).not.toBe(0);
    expect(run.err.trim().split('\n')).toHaveLength(1);
    expect(run.err).toMatch(new RegExp(`^harvest: HARVEST_REDIS_PREFIX=${a.prefix} is used by another database`));
    expect(await jobsIn(other)).toBe(0);
    // The prefix still names the first database, whose own processes open as before.
    expect(await a.services.redis.get(prefixOwnerKey(a.prefix))).toBe(owner);
    const again = await openServices(a.config, silentLogger);
    await again.close();
  });

  it('binds the prefix again after the key is lost (a flushed Redis), and processes that only look are not refused', async () => {
    const env = { ...a.env, DATABASE_URL: other.url };
    // `status` opens keyless: it queues nothing, so it needs no claim.
    expect((await runCli(['status'], env)).code).toBe(0);
    await a.services.redis.del(prefixOwnerKey(a.prefix));
    const reopened = await openServices(a.config, silentLogger);
    await reopened.close();
    const { rows } = await a.services.pool.query<{ id: string }>('SELECT id::text FROM database_identity');
    expect(await a.services.redis.get(prefixOwnerKey(a.prefix))).toBe(rows[0]!.id);
    await expect(openServices(loadConfig(env, { dotenv: false }), silentLogger)).rejects.toBeInstanceOf(ConfigError);
  });

  it('refuses `resume` of the second database\'s job: it would queue its slices under the prefix', async () => {
    const env = { ...a.env, DATABASE_URL: other.url };
    const { rows } = await other.pool.query<{ id: string }>(
      `INSERT INTO jobs (kind, params, status, priority) VALUES ('search', '{"query":"x","since":"2026-10-01","until":"2026-10-02"}', 'paused', 'backfill') RETURNING id::text`,
    );
    const jobId = rows[0]!.id;
    const resumed = await runCli(['resume', jobId], env);
    expect(resumed.code).not.toBe(0);
    expect(resumed.err).toMatch(new RegExp(`^harvest: HARVEST_REDIS_PREFIX=${a.prefix} is used by another database`));
    expect((await other.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [jobId])).rows[0]!.status).toBe('paused');
    // Pause and cancel only take work out: an operator can still stop a job.
    expect((await runCli(['cancel', jobId], env)).code).toBe(0);
  });
});
