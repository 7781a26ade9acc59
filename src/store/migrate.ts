/**
 * Forward-only SQL migrations: `migrations/NNNN_<slug>.sql`, applied in name order, all pending
 * files in ONE transaction under a transaction-scoped advisory lock, each recorded with its
 * checksum in `schema_migrations`. Safe to run twice and from several processes at once: the
 * lock serialises them and the second finds nothing pending.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { silentLogger, type Logger } from '../logger.ts';
import { connectionOptions, SqlState, sqlState, toConnectionError, type Queryable } from './db.ts';
import { MigrationConflictError } from './errors.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Arbitrary constant: the advisory lock key every harvest migrator agrees on ("harvest" in hex-ish). */
const MIGRATION_LOCK_KEY = 7_243_019_771_204;

const FILE_PATTERN = /^\d{4}_[a-z0-9_-]+\.sql$/;

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => FILE_PATTERN.test(n)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(`${dir}/${name}`, 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/** A Postgres identifier, double-quoted and escaped: the only thing ever interpolated into SQL. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ ...connectionOptions(url), application_name: 'harvest-migrate' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** Creates the database named in the URL when it is missing, through the server's `postgres` db. */
export async function ensureDatabase(databaseUrl: string, logger: Logger = silentLogger): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name || name === 'postgres') return false;
  url.pathname = '/postgres';
  let admin: pg.Client;
  try {
    admin = await connect(url.toString());
  } catch (error) {
    throw toConnectionError(error, databaseUrl);
  }
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if ((found.rowCount ?? 0) > 0) return false;
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
    logger.info({ database: name }, 'created database');
    return true;
  } catch (error) {
    // Another process created it between our check and our CREATE: that is success.
    const code = sqlState(error);
    if (code === SqlState.DUPLICATE_DATABASE || code === SqlState.UNIQUE_VIOLATION) return false;
    throw error;
  } finally {
    await admin.end().catch(() => undefined);
  }
}

const LEDGER_SQL = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  name text PRIMARY KEY,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE schema_migrations IS 'Ledger of applied migration files (harvest migrate).';
COMMENT ON COLUMN schema_migrations.name IS 'File name, e.g. 0001_entities.sql.';
COMMENT ON COLUMN schema_migrations.checksum IS 'sha256 of the file as applied; an edited landed file is refused.';
COMMENT ON COLUMN schema_migrations.applied_at IS 'When it was applied.';
`;

/**
 * Refuses a database this code is newer than: migration files not applied yet would surface as
 * `column … does not exist` in the middle of a command. One line that names `harvest migrate`.
 */
export async function requireMigrated(db: Queryable, dir = MIGRATIONS_DIR): Promise<void> {
  const files = await readMigrations(dir);
  const { rows: ledger } = await db.query<{ present: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  const { rows } = ledger[0]?.present ? await db.query<{ name: string }>('SELECT name FROM schema_migrations') : { rows: [] };
  const landed = new Set(rows.map((r) => r.name));
  const pending = files.filter((f) => !landed.has(f.name));
  if (pending.length === 0) return;
  throw new MigrationConflictError(
    pending[0]!.name,
    landed.size === 0
      ? 'the database has no harvest tables yet: run `harvest migrate`'
      : `the database is ${pending.length} migration${pending.length === 1 ? '' : 's'} behind this version (${pending[0]!.name} first): run \`harvest migrate\``,
  );
}

export interface MigrateOptions {
  logger?: Logger;
  /** Directory of the migration files (tests point it elsewhere). */
  dir?: string;
}

export async function migrate(
  databaseUrl: string,
  loggerOrOptions: Logger | MigrateOptions = {},
): Promise<{ applied: string[] }> {
  const options: MigrateOptions = 'info' in loggerOrOptions ? { logger: loggerOrOptions as Logger } : loggerOrOptions;
  const logger = options.logger ?? silentLogger;
  const files = await readMigrations(options.dir);
  await ensureDatabase(databaseUrl, logger);
  let client: pg.Client;
  try {
    client = await connect(databaseUrl);
  } catch (error) {
    throw toConnectionError(error, databaseUrl);
  }
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await client.query(LEDGER_SQL);
      const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations');
      const landed = new Map(rows.map((r) => [r.name, r.checksum]));
      for (const file of files) {
        const checksum = landed.get(file.name);
        if (checksum !== undefined && checksum !== file.checksum) {
          throw new MigrationConflictError(
            file.name,
            `migration ${file.name} was edited after it was applied (checksum ${checksum.slice(0, 12)} in the database, ${file.checksum.slice(0, 12)} on disk); landed migrations are never edited: restore it and add a new numbered file`,
          );
        }
      }
      const known = new Set(files.map((f) => f.name));
      const unknown = [...landed.keys()].filter((name) => !known.has(name));
      if (unknown.length > 0) logger.warn({ unknown }, 'the database has migrations this code does not know (newer deploy?)');
      const pending = files.filter((f) => !landed.has(f.name));
      for (const file of pending) {
        await client.query(file.sql);
        await client.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [file.name, file.checksum]);
        logger.info({ migration: file.name }, 'applied migration');
      }
      await client.query('COMMIT');
      return { applied: pending.map((f) => f.name) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
