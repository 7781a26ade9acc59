import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdtemp, readdir, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../src/store/db.ts';
import { DatabaseUnavailableError, MigrationConflictError } from '../../src/store/errors.ts';
import { MIGRATIONS_DIR, migrate, readMigrations, requireMigrated } from '../../src/store/migrate.ts';
import { createTestDatabase, databaseUrl, dropDatabase, freshDatabaseName } from '../helpers/database.ts';

const created: string[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const name of created) await dropDatabase(name);
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/**
 * A fresh database migrated as the version before migration `number` left it (that migration and
 * every later one held back in a copy of the directory), and a pool on it.
 */
async function databaseBefore(number: string): Promise<{ dir: string; url: string; pool: ReturnType<typeof createPool> }> {
  const dir = await mkdtemp(join(tmpdir(), 'harvest-migrations-'));
  dirs.push(dir);
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  for (const name of await readdir(dir)) if (name.endsWith('.sql') && name >= number) await rm(join(dir, name));
  const url = databaseUrl(fresh());
  await migrate(url, { dir });
  return { dir, url, pool: createPool(url) };
}

function fresh(): string {
  const name = freshDatabaseName();
  created.push(name);
  return name;
}

async function ledger(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    return rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

describe('migrate', () => {
  it('creates the missing database, applies every file, and applies nothing the second time', async () => {
    const url = databaseUrl(fresh());
    const files = (await readMigrations()).map((f) => f.name);
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(await migrate(url)).toEqual({ applied: files });
    expect(await migrate(url)).toEqual({ applied: [] });
    expect(await ledger(url)).toEqual(files);
  });

  it('is safe from three processes at once on a database that does not exist yet', async () => {
    const url = databaseUrl(fresh());
    const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
    const files = (await readMigrations()).map((f) => f.name);
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, files.length]);
    expect(await ledger(url)).toEqual(files);
  });

  it('is safe from three separate OS processes at once', async () => {
    const url = databaseUrl(fresh());
    const run = promisify(execFile);
    const script = `const { migrate } = await import(${JSON.stringify(new URL('../../src/store/migrate.ts', import.meta.url).href)});
      process.stdout.write(JSON.stringify(await migrate(process.argv[1])));`;
    const outputs = await Promise.all(
      [1, 2, 3].map(() => run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, url], { timeout: 20_000 })),
    );
    const applied = outputs.map((o) => (JSON.parse(o.stdout) as { applied: string[] }).applied.length).sort();
    const files = await readMigrations();
    expect(applied).toEqual([0, 0, files.length]);
    expect(await ledger(url)).toEqual(files.map((f) => f.name));
  });

  it('refuses when a landed migration file was edited, and applies a new file after it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'harvest-migrations-'));
    dirs.push(dir);
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
    const url = databaseUrl(fresh());
    await migrate(url, { dir });
    await writeFile(join(dir, '0099_extra.sql'), '-- 0099: a later file\nCREATE TABLE extra (id int);\nCOMMENT ON TABLE extra IS $$x$$;\n');
    expect(await migrate(url, { dir })).toEqual({ applied: ['0099_extra.sql'] });
    await appendFile(join(dir, '0001_entities.sql'), '\n-- an edit after landing\n');
    const refused = migrate(url, { dir });
    await expect(refused).rejects.toBeInstanceOf(MigrationConflictError);
    await expect(migrate(url, { dir })).rejects.toMatchObject({ code: 'DB_MIGRATION_CONFLICT', migration: '0001_entities.sql' });
  });

  it('0013 copies a v3 banner address into banner_url, and leaves every other row as it was', async () => {
    const { dir, url, pool } = await databaseBefore('0013');
    try {
      const banner = 'https://pbs.twimg.com/profile_banners/1/1700000000';
      await pool.query(
        `INSERT INTO users (id, profile_background_image_url, banner_url, source, raw, first_seen_at, last_seen_at) VALUES
           (1, $1, NULL, 'v3', '{}', now(), now()),
           (2, 'https://abs.twimg.com/images/themes/theme1/bg.png', NULL, 'v3', '{}', now(), now()),
           (3, $1, 'https://pbs.twimg.com/profile_banners/3/1', 'v2-basic', '{}', now(), now()),
           (4, NULL, NULL, 'v3', '{}', now(), now())`,
        [banner],
      );
      await cp(join(MIGRATIONS_DIR, '0013_users_v3_shapes.sql'), join(dir, '0013_users_v3_shapes.sql'));
      expect(await migrate(url, { dir })).toEqual({ applied: ['0013_users_v3_shapes.sql'] });
      const { rows } = await pool.query<{ banner_url: string | null }>('SELECT banner_url FROM users ORDER BY id');
      expect(rows.map((r) => r.banner_url)).toEqual([banner, null, 'https://pbs.twimg.com/profile_banners/3/1', null]);
    } finally {
      await pool.end();
    }
  });

  it('0012 gives every slice that exists its job\'s priority, and so a slice inserted without one', async () => {
    const { dir, url, pool } = await databaseBefore('0012');
    try {
      // As the version before left them, queued on their job's queue: a mentions history range
      // (a watch job) and a search watch's pass reading on from its watermark (a backfill job).
      const { rows: jobs } = await pool.query<{ id: string }>(
        `INSERT INTO jobs (kind, params, priority) VALUES ('mentions', '{}', 'watch'), ('search', '{}', 'backfill') RETURNING id::text`,
      );
      await pool.query(
        `INSERT INTO job_slices (job_id, kind, params) VALUES ($1, 'search', '{"query":"x"}'), ($2, 'search', '{"pass":2,"watermarkId":"17"}')`,
        [jobs[0]!.id, jobs[1]!.id],
      );
      await cp(join(MIGRATIONS_DIR, '0012_slice_priority.sql'), join(dir, '0012_slice_priority.sql'));
      expect(await migrate(url, { dir })).toEqual({ applied: ['0012_slice_priority.sql'] });
      const priorities = async () => (await pool.query<{ priority: string }>('SELECT priority FROM job_slices ORDER BY id')).rows.map((r) => r.priority);
      expect(await priorities()).toEqual(['watch', 'backfill']);
      // A worker of the version before, during a rolling upgrade, still queues by its job's.
      await pool.query(`INSERT INTO job_slices (job_id, kind, params) VALUES ($1, 'search', '{}')`, [jobs[0]!.id]);
      expect(await priorities()).toEqual(['watch', 'backfill', 'watch']);
    } finally {
      await pool.end();
    }
  });

  it('rolls back every pending file when one fails', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'harvest-migrations-'));
    dirs.push(dir);
    await writeFile(join(dir, '0001_ok.sql'), '-- ok\nCREATE TABLE ok_table (id int);\n');
    await writeFile(join(dir, '0002_bad.sql'), '-- bad\nCREATE TABLE broken (id nosuchtype);\n');
    const url = databaseUrl(fresh());
    await expect(migrate(url, { dir })).rejects.toMatchObject({ code: '42704' });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query(`SELECT to_regclass('ok_table') AS t, to_regclass('schema_migrations') AS l`);
    await client.end();
    expect(rows[0]).toEqual({ t: null, l: null });
  });

  it('a database behind this version is refused in one line that says to run harvest migrate', async () => {
    const files = await readMigrations();
    const last = files.at(-1)!.name;
    const { dir, url, pool } = await databaseBefore(last.slice(0, 4));
    try {
      await expect(requireMigrated(pool)).rejects.toThrow(`the database is 1 migration behind this version (${last} first): run \`harvest migrate\``);
      await migrate(url);
      await expect(requireMigrated(pool)).resolves.toBeUndefined();
      // The copy of the directory without the last file: a database ahead of the code is its own warning (migrate).
      await expect(requireMigrated(pool, dir)).resolves.toBeUndefined();
    } finally {
      await pool.end();
    }
    const emptyUrl = databaseUrl(fresh());
    const noFiles = await mkdtemp(join(tmpdir(), 'harvest-none-'));
    dirs.push(noFiles);
    await migrate(emptyUrl, { dir: noFiles });
    const empty = createPool(emptyUrl);
    try {
      await expect(requireMigrated(empty)).rejects.toThrow('the database has no harvest tables yet: run `harvest migrate`');
    } finally {
      await empty.end();
    }
  });

  it('names host:port in a one-line error when Postgres cannot be reached', async () => {
    const failure = migrate('postgres://root@127.0.0.1:1/harvest_unreachable');
    await expect(failure).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(failure).rejects.toThrow(/^cannot connect to Postgres at 127\.0\.0\.1:1\/harvest_unreachable: connection refused/);
    const pool = createPool('postgres://root@127.0.0.1:1/x');
    await expect(withTransaction(pool, async () => 1)).rejects.toMatchObject({ code: 'DB_UNAVAILABLE', target: '127.0.0.1:1/x' });
    await pool.end();
  });
});

describe('schema documentation', () => {
  it('has a COMMENT ON every table, view and column', async () => {
    const db = await createTestDatabase();
    try {
      const { rows } = await db.pool.query<{ missing: string }>(`
        SELECT c.relname AS missing FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm') AND obj_description(c.oid, 'pg_class') IS NULL
        UNION ALL
        SELECT c.relname || '.' || a.attname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm') AND col_description(c.oid, a.attnum) IS NULL
        ORDER BY 1`);
      expect(rows.map((r) => r.missing)).toEqual([]);
      const { rows: count } = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v')`,
      );
      expect(count[0]!.n).toBeGreaterThan(20);
    } finally {
      await db.drop();
    }
  });
});
