/**
 * `harvest migrate` on a server whose maintenance databases this role cannot reach (a managed or
 * hardened Postgres: pg_hba per database, or no `postgres` database at all). Needs its own
 * cluster, since pg_hba and dropping `postgres` are server-wide: a private one from initdb on a
 * free loopback port, removed afterwards. Skipped where initdb (or root, to run it as postgres)
 * is missing.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../src/store/errors.ts';
import { migrate, readMigrations } from '../../src/store/migrate.ts';
import { closedPort as freePort } from '../helpers/net.ts';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const usable = existsSync(`${BIN}/initdb`) && process.getuid?.() === 0;

describe.skipIf(!usable)('migrate without the maintenance databases', () => {
  let dir = '';
  let port = 0;
  const asPostgres = (cmd: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', `${BIN}/${cmd}`, ...args], { timeout: 60_000 });
  const admin = async (database: string, sql: string) => {
    const client = new pg.Client({ connectionString: `postgres://pgadmin@127.0.0.1:${port}/${database}` });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'harvest-pg-'));
    await chown(dir, Number((await run('id', ['-u', 'postgres'])).stdout), Number((await run('id', ['-g', 'postgres'])).stdout));
    port = await freePort();
    await asPostgres('initdb', ['-D', `${dir}/data`, '-U', 'pgadmin', '--auth=trust']);
    // appuser may reach its own database only; app2 any database (the server will have no `postgres`).
    await writeFile(
      `${dir}/data/pg_hba.conf`,
      ['local all all trust', 'host harvest_app appuser 127.0.0.1/32 trust', 'host all app2 127.0.0.1/32 trust', 'host harvest_other app3 127.0.0.1/32 trust', 'host all pgadmin 127.0.0.1/32 trust', ''].join('\n'),
    );
    await asPostgres('pg_ctl', ['-D', `${dir}/data`, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, '-l', `${dir}/log`, '-w', 'start']);
    await admin('postgres', 'CREATE ROLE appuser LOGIN');
    await admin('postgres', 'CREATE ROLE app2 LOGIN CREATEDB');
    await admin('postgres', 'CREATE ROLE app3 LOGIN CREATEDB');
    await admin('postgres', 'CREATE DATABASE harvest_app OWNER appuser');
  }, 120_000);

  afterAll(async () => {
    if (dir === '') return;
    await asPostgres('pg_ctl', ['-D', `${dir}/data`, '-m', 'immediate', 'stop']).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('migrates a database whose role may reach only that database', async () => {
    const files = (await readMigrations()).map((f) => f.name);
    const url = `postgres://appuser@127.0.0.1:${port}/harvest_app`;
    expect(await migrate(url)).toEqual({ applied: files });
    expect(await migrate(url)).toEqual({ applied: [] });
  });

  it('creates a missing database through template1 when the server has no postgres database', async () => {
    await admin('template1', 'DROP DATABASE postgres');
    const files = (await readMigrations()).map((f) => f.name);
    expect(await migrate(`postgres://app2@127.0.0.1:${port}/harvest_new`)).toEqual({ applied: files });
  });

  it('names the maintenance database it failed on, not the missing one', async () => {
    // app3 may reach harvest_other only (missing), template1 not (pg_hba), and postgres is gone.
    const error = await migrate(`postgres://app3@127.0.0.1:${port}/harvest_other`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain(`127.0.0.1:${port}/harvest_other: it does not exist`);
    expect(message).toContain('postgres: 28000');
    expect(message).toContain('template1: 28000');
    expect(message).not.toContain('run `harvest migrate`');
  });
});
