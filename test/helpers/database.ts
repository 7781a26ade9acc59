/**
 * A fresh, migrated database per test file, copied from a template migrated once per test run
 * (graphile-worker's approach: a copy takes ~100 ms, migrating takes longer).
 *
 * Names carry the vitest main process id (every fork shares it as ppid), so files of one run share
 * one template and a later run can recognise, and drop, what a crashed run left behind. The last
 * file of a run to finish drops the template too; a file that starts later simply rebuilds it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

/** Serialises template creation/removal across the forks of a run (and across runs). */
const TEMPLATE_LOCK_KEY = 7_243_019_771_205;
const RUN_ID = process.ppid;
const TEMPLATE = `harvest_tpl_${RUN_ID}`;
const TEST_PREFIX = `harvest_t_${RUN_ID}_`;

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function withAdmin<T>(fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: ADMIN_URL, application_name: 'harvest-tests' });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      return await fn(admin);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  } finally {
    await admin.end();
  }
}

/** Drops databases this helper created in runs whose vitest process is gone. */
async function dropStale(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname ~ '^harvest_(tpl|t)_[0-9]+(_[a-z0-9]+)?$'`,
  );
  for (const { datname } of rows) {
    const pid = Number(/^harvest_(?:tpl|t)_(\d+)/.exec(datname)?.[1]);
    if (pid !== RUN_ID && !alive(pid)) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

/** A database name this helper will clean up after a crash (for tests that create databases themselves). */
export function freshDatabaseName(): string {
  return `${TEST_PREFIX}${randomBytes(5).toString('hex')}`;
}

/** Drops a database created by a test (connections to it are terminated). */
export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`));
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = freshDatabaseName();
  await withAdmin(async (admin) => {
    await dropStale(admin);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE]);
    if ((exists.rowCount ?? 0) === 0) {
      // Built under another name and renamed, so a half-migrated template is never copied.
      const building = `${TEMPLATE}_building`;
      await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${building}"`);
      await migrate(databaseUrl(building));
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${TEMPLATE}"`);
    }
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE}"`);
  });
  const url = databaseUrl(name);
  const pool = createPool(url, { max: 5, applicationName: 'harvest-tests' });
  let dropped = false;
  return {
    name,
    url,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end();
      await withAdmin(async (admin) => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        const others = await admin.query(`SELECT 1 FROM pg_database WHERE starts_with(datname, $1)`, [TEST_PREFIX]);
        if ((others.rowCount ?? 0) === 0) await admin.query(`DROP DATABASE IF EXISTS "${TEMPLATE}" WITH (FORCE)`);
      });
    },
  };
}
