import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { describe, expect, it } from 'vitest';
import { deletePrefixKeysAt } from '../../src/jobs/redis-keys.ts';
import { ADMIN_URL, createTestDatabase } from '../helpers/database.ts';
import { REDIS_URL, useHarness } from '../helpers/harness.ts';

const BAD: string[][] = [
  ['search'],
  ['search', ''],
  ['search', '   '],
  ['search', 'btc', '--since', '2026-02-30'],
  ['search', 'btc', '--since', '2026/01/01'],
  ['search', 'btc', '--until', 'yesterday'],
  ['search', 'btc', '--since', '2026-05-02', '--until', '2026-05-01'],
  ['search', 'btc', '--since', '2026-05-01', '--until', '2026-05-01'],
  ['search', 'btc', '--since', '2099-01-01'],
  ['search', 'btc', '--since', '2009-06-01'],
  ['search', 'btc', '--since', '2010-11-04', '--until', '2011-01-01'],
  ['search', 'btc', '--until', '2010-06-01'],
  ['search', 'btc', '--order', 'oldest'],
  ['search', 'btc', '--max-tweets', '0'],
  ['search', 'btc', '--max-tweets', '-5'],
  ['search', 'btc', '--max-tweets', '1e3'],
  ['search', 'btc', '--max-requests', '12abc'],
  ['search', 'btc', '--max-requests', '9007199254740993'],
  ['search', '(btc OR eth', '--since', '2026-01-01'],
  ['search', '"unbalanced', '--since', '2026-01-01'],
  ['search', 'btc since:2026-01-01', '--since', '2026-01-01'],
  ['search', 'btc', '--bogus'],
  ['search', 'btc', '--concurrency', '0'],
  ['mentions', 'not a handle'],
  ['mentions', '@this_handle_is_far_too_long'],
  ['mentions', 'jack', '--every', '10s'],
  ['mentions', 'jack', '--every', 'often'],
  ['mentions', 'jack', '--min-likes', '-1'],
  ['mentions', 'jack', '--min-retweets', 'many'],
  ['mentions', 'jack', '--since', '2099-01-01', '--every', '5m'],
  ['mentions', 'jack', '--since', '2009-06-01'],
  ['user', 'https://x.com/home'],
  ['user', 'https://example.com/jack'],
  ['user', '0123'],
  ['user', 'jack', '--max-tweets', 'all'],
  // --max-tweets ends a job; a watch runs until cancelled (it stopped the watch after one pass).
  ['user', 'jack', '--max-tweets', '30', '--every', '1h'],
  ['search', 'btc', '--max-tweets', '30', '--every', '1h'],
  ['list', 'https://x.com/i/communities/123'],
  ['list', 'abc'],
  ['community', 'https://x.com/i/lists/123'],
  ['replies', 'https://x.com/jack/likes'],
  ['replies', '12.5'],
  ['replies', '123456789012345678901'],
  ['hydrate', '/nonexistent/file.txt'],
  ['status', 'abc'],
  ['pause', '-1'],
  ['cancel', '99999999999999999999'],
  ['export', '1', '--format', 'xml'],
  ['export', '1', '--format', 'jsonl', '--spreadsheet'],
  ['frobnicate'],
];

describe('bad command lines', () => {
  const h = useHarness();

  it.each(BAD.map((argv) => [argv.join(' '), argv] as const))('%s → one clear line, non-zero exit, nothing enqueued', async (_name, argv) => {
    const { code, err: text } = await runCli(argv, h.env);
    expect(code).not.toBe(0);
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toMatch(/\n\s+at /); // no stack trace
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
    expect(rows[0]!.n).toBe(0);
    const counts = await h.services.queues.counts();
    expect(Object.values(counts.backfill).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('a mistyped option or command is one line with its suggestion, and exits 64, never audit\'s 2 (not complete)', async () => {
    const option = await runCli(['search', 'coffee', '--sinc', '2026-01-01'], h.env);
    expect([option.code, option.err]).toEqual([64, "error: unknown option '--sinc' (did you mean --since?)"]);
    const command = await runCli(['searh', 'coffee'], h.env);
    expect([command.code, command.err]).toEqual([64, "error: unknown command 'searh' (did you mean search?)"]);
    for (const argv of [['audit'], ['audit', '1', '--reapir']]) expect((await runCli(argv, h.env)).code, argv.join(' ')).toBe(64);
  });

  it('a hydrate file with bad lines, or over a job\'s 1,000,000 ids, gets one line naming them', { timeout: 30_000 }, async () => {
    const file = join(tmpdir(), `bad-hydrate-${process.pid}.txt`);
    await writeFile(file, ['1800000000000000001', 'nope', '12.5', 'https://x.com/a/likes', 'x', '1800000000000000002'].join('\n'));
    const bad = await runCli(['hydrate', file], h.env);
    expect(bad.code).not.toBe(0);
    expect(bad.err.split('\n')).toHaveLength(1);
    expect(bad.err).toMatch(/^harvest: <file>: 4 lines are not tweet ids or links \(line 2: .*; line 3: .*; line 4: .*; 1 more\); nothing was queued$/);
    await writeFile(file, Array.from({ length: 1_000_001 }, (_, i) => String(1_800_000_000_000_000_000n + BigInt(i))).join('\n'));
    const big = await runCli(['hydrate', file], h.env);
    expect(big.code).not.toBe(0);
    expect(big.err).toBe('harvest: <file>: 1000001 distinct ids; one hydrate job takes at most 1000000 (split the file); nothing was queued');
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
    expect(rows[0]!.n).toBe(0);
  });
});

describe('query checks come before any service is opened', () => {
  it('a query that bounds itself in ids beside --since is refused with its reason though Postgres and Redis are unreachable', async () => {
    const env = { HARVEST_API_KEYS: 'k', DATABASE_URL: 'postgres://root@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' };
    for (const query of ['coffee since_id:5', 'coffee max_id:9', 'coffee within_time:2d']) {
      const run = await runCli(['search', query, '--since', '2026-01-01'], env);
      expect(run.code, query).not.toBe(0);
      expect(run.err.split('\n'), query).toHaveLength(1);
      expect(run.err, query).not.toMatch(/Postgres|Redis|connect/i);
    }
  });

  it('a Postgres that answers but refuses is not told to be started: a missing database, a refused login', async () => {
    const at = (path: string, user?: string) => {
      const url = new URL(ADMIN_URL);
      if (user) url.username = user;
      url.pathname = path;
      return url.toString();
    };
    const env = { HARVEST_API_KEYS: 'k' };
    const missing = await runCli(['status'], { ...env, DATABASE_URL: at('/harvest_no_such_db') });
    expect([missing.code, missing.err.trim()]).toEqual([1, expect.stringMatching(/database "harvest_no_such_db" does not exist; `harvest migrate` creates it$/)]);
    const role = await runCli(['status'], { ...env, DATABASE_URL: at('/postgres', 'harvest_no_such_role') });
    expect(role.err).toMatch(/role "harvest_no_such_role" does not exist; check the user and password in DATABASE_URL$/m);
    for (const r of [missing, role]) expect(r.err).not.toMatch(/start it/);
  });

  it('a REDIS_URL database this Redis refuses is one line, not database 0 in silence', async () => {
    const redis = new URL(REDIS_URL);
    redis.pathname = '/99';
    const db = await createTestDatabase();
    // Its own prefix: the old code went on in database 0 and created its queues there.
    const prefix = `htest_db99_${process.pid}`;
    const run = await runCli(['status'], { DATABASE_URL: db.url, REDIS_URL: redis.toString(), HARVEST_REDIS_PREFIX: prefix }).finally(async () => {
      await db.drop();
      await deletePrefixKeysAt(REDIS_URL, prefix);
    });
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^harvest: REDIS_URL names database 99, which this Redis refuses \(ERR DB index is out of range\)$/);
  });

  it('audit and export meet Postgres as every other command does: a missing database, one without harvest tables', async () => {
    const at = (path: string) => Object.assign(new URL(ADMIN_URL), { pathname: path }).toString();
    for (const argv of [['audit', '1'], ['export', '1', '--format', 'csv']]) {
      const missing = await runCli(argv, { DATABASE_URL: at('/harvest_no_such_db') });
      expect([missing.code, missing.err.trim()], argv[0]).toEqual([1, expect.stringMatching(/database "harvest_no_such_db" does not exist; `harvest migrate` creates it$/)]);
      // The admin database holds no harvest tables (only read here).
      const bare = await runCli(argv, { DATABASE_URL: at('/postgres') });
      expect([bare.code, bare.err.trim()], argv[0]).toEqual([1, 'harvest: the database has no harvest tables yet: run `harvest migrate`']);
    }
  });
});
