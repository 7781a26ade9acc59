import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { laterDashboardCommand, printableDatabaseUrl } from '../../src/cli/demo/dashboard.ts';
import { DEMO_DEFAULTS, withDatabase, type DemoOptions } from '../../src/cli/demo/options.ts';
import { runDemo } from '../../src/cli/demo/run.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADMIN_URL, dropDatabase, freshDatabaseName } from '../helpers/database.ts';
import { deletePrefixKeysAt } from '../../src/jobs/redis-keys.ts';
import { REDIS_URL } from '../helpers/redis.ts';
import { capture } from '../helpers/cli.ts';

const small: DemoOptions = {
  ...DEMO_DEFAULTS,
  world: { users: 600, tweets: 12_000 },
  latencyMs: [2, 10],
  ratePerKey: 50,
  newMentions: 23,
  database: freshDatabaseName(),
  redisPrefix: `htest_demo_${randomBytes(4).toString('hex')}`,
};

describe('harvest demo', () => {
  afterAll(async () => {
    await dropDatabase(small.database);
    await deletePrefixKeysAt(REDIS_URL, small.redisPrefix);
  });

  it('runs every step, fetches only the new mentions on the second watch pass, and prints the summary and queries', async () => {
    const out = capture();
    const err = capture();
    const result = await runDemo(small, { databaseUrl: ADMIN_URL, redisUrl: REDIS_URL }, { out: out.stream, err: err.stream, logger: silentLogger });
    expect(err.text()).toBe('');
    expect(result.exitCode).toBe(0);
    const text = out.text();
    for (const section of ['1. Search backfill', '2. Mention watch', '3. List crawl', '4. Community crawl', '== Summary', 'Example query 1', 'Example query 2', 'Example query 3']) {
      expect(text).toContain(section);
    }
    for (const line of ['tweets', 'users', 'edges', 'requests', 'backfill rate', '429s received', 'quota used', 'elapsed']) {
      expect(text).toMatch(new RegExp(`^${line} +\\S`, 'm'));
    }
    // the second pass stored exactly the mentions added between the passes, at 20 per page
    const watch = result.watch!;
    expect(watch.added).toHaveLength(23);
    expect([...watch.secondPassIds].sort()).toEqual([...watch.added].sort());
    expect(watch.secondPassRequests).toBe(2);
    const s = result.summary!;
    expect(s.tweets).toBeGreaterThan(0);
    expect(s.listMembers + s.communityMembers).toBeGreaterThan(0);
    // the community crawl walks the community's feed as well as its members
    expect(text).toMatch(/^community: [1-9][\d,]* tweets of its feed and [1-9][\d,]* users/m);
    // the headings count the members the service lists, so they match what the crawls stored
    const heading = (pattern: RegExp) => Number(pattern.exec(text)?.[1]?.replaceAll(',', '') ?? NaN);
    expect(heading(/^== 3\. List crawl: .*: tweets, ([\d,]+) members/m)).toBe(s.listMembers);
    expect(heading(/^== 4\. Community crawl: .*: ([\d,]+) members/m)).toBe(s.communityMembers);
    expect(s.backfillRates).toHaveLength(1);
    expect(s.backfillRates[0]!.perSecond).toBeLessThanOrEqual(small.ratePerKey * 1.1);
    expect(s.quotaUsed).toBeGreaterThan(0);
    // each example query printed a table with rows under its header rule
    expect(text.match(/^-{2,}( +-+)+$/gm)?.length ?? 0).toBeGreaterThanOrEqual(3);
  }, 40_000);

  it('prints a database address without its password, wherever the address carries it', () => {
    for (const url of ['postgres://u:s3cret@db:5432/d', 'postgres://u@db/d?password=s3cret', 'postgres://u@db/d?sslmode=verify-full&sslpassword=s3cret']) {
      const printed = printableDatabaseUrl(url);
      expect(printed.url).not.toContain('s3cret');
      expect(printed.hint).toContain('PGPASSWORD');
      const command = laterDashboardCommand(url, 'p', 'http://127.0.0.1:1');
      expect(command).not.toContain('s3cret');
      // Pasted into a shell as printed: the hint sat outside the comment and bash refused the line.
      expect(() => execFileSync('bash', ['-n', '-c', command])).not.toThrow();
      expect(command).toMatch(/^DATABASE_URL='[^']+' HARVEST_REDIS_PREFIX='p' HARVEST_BASE_URL='http:\/\/127\.0\.0\.1:1' node '\/[^']+\/bin\/harvest\.js' dashboard +# /);
    }
    expect(printableDatabaseUrl('postgres://u@db/d?sslmode=require')).toEqual({ url: 'postgres://u@db/d?sslmode=require', hint: '' });
  });

  it('runs again on the same database and prefix, from a clean slate, and never prints the database password', async () => {
    const out = capture();
    // The test server trusts loopback, so any password logs in: the demo must still not print it.
    const withPassword = new URL(ADMIN_URL);
    withPassword.password = 's3cret-pw';
    const again = await runDemo({ ...small, world: { users: 500, tweets: 3000 } }, { databaseUrl: withPassword.toString(), redisUrl: REDIS_URL }, { out: out.stream, err: capture().stream, logger: silentLogger });
    expect(again.exitCode).toBe(0);
    // job ids restart at 1: the database was recreated, not appended to
    expect(out.text()).toContain('WHERE job_id = 1\n');
    expect(out.text()).not.toContain('s3cret-pw');
    expect(out.text()).toMatch(/`psql '[^']+'` \(with PGPASSWORD set to the password of your DATABASE_URL\)/);
    expect(out.text()).toMatch(/bin\/harvest\.js' dashboard +# then open http:\/\/127\.0\.0\.1:8080\/ \(with PGPASSWORD set/);
  }, 30_000);

  it('says in one line that Redis is unreachable, and how to start it, with exit 1', async () => {
    const err = capture();
    const started = Date.now();
    const result = await runDemo(small, { databaseUrl: ADMIN_URL, redisUrl: 'redis://127.0.0.1:1' }, { out: capture().stream, err: err.stream, logger: silentLogger });
    expect(result.exitCode).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    const lines = err.text().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Redis at 127\.0\.0\.1:1/);
    expect(lines[0]).toMatch(/docker compose up -d redis/);
  }, 15_000);

  it('says in one line that Postgres is unreachable, and how to start it, with exit 1', async () => {
    const err = capture();
    const result = await runDemo(small, { databaseUrl: withDatabase(ADMIN_URL.replace(':5432', ':1'), 'postgres'), redisUrl: REDIS_URL }, { out: capture().stream, err: err.stream, logger: silentLogger });
    expect(result.exitCode).toBe(1);
    const lines = err.text().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Postgres/);
    expect(lines[0]).toMatch(/docker compose up -d postgres/);
  }, 15_000);
});
