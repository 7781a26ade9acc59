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
import { connectionOptions, describeTarget, SqlState, sqlState, toConnectionError, type Queryable } from './db.ts';
import { DatabaseUnavailableError, MigrationConflictError } from './errors.ts';

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

/**
 * The server's maintenance databases, in the order `createdb` tries them: a managed or hardened
 * server may have no `postgres` database, or refuse this role there, yet let it into `template1`.
 */
const MAINTENANCE_DATABASES = ['postgres', 'template1'] as const;

/**
 * Creates the database named in the URL when it is missing, through a maintenance database
 * (`postgres`, else `template1`). `migrate` calls it only once the database itself answered
 * 3D000: a role allowed on its own database alone never needs to reach either.
 */
export async function ensureDatabase(databaseUrl: string, logger: Logger = silentLogger): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name || (MAINTENANCE_DATABASES as readonly string[]).includes(name)) return false;
  let admin: pg.Client | undefined;
  const refusals: Array<{ error: unknown; url: string }> = [];
  for (const maintenance of MAINTENANCE_DATABASES) {
    url.pathname = `/${maintenance}`;
    try {
      admin = await connect(url.toString());
      break;
    } catch (error) {
      // Only a connection-level refusal sends us to the next one; anything else is a real error.
      if (!(toConnectionError(error, url.toString()) instanceof DatabaseUnavailableError)) throw error;
      refusals.push({ error, url: url.toString() });
    }
  }
  if (admin === undefined) {
    // Named after the maintenance databases it failed on, not the target: "the target does not
    // exist (run `harvest migrate`)" sent the operator in a circle.
    const why = refusals.map(({ error, url: tried }) => {
      const failed = toConnectionError(error, tried) as DatabaseUnavailableError;
      return `${new URL(tried).pathname.slice(1)}: ${sqlState(error) === SqlState.INVALID_CATALOG_NAME ? 'does not exist' : failed.reason}`;
    });
    throw new DatabaseUnavailableError(
      describeTarget(databaseUrl),
      `it does not exist, and creating it goes through the postgres or template1 database, which failed (${why.join('; ')}): create ${name} yourself, or let this role connect to one of them`,
      { cause: refusals[0]!.error },
    );
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

/**
 * A client on the database to migrate. The database itself is tried first: a role that may reach
 * only its own database (pg_hba per database, CONNECT revoked on `postgres`, a server without a
 * `postgres` database) migrates it all the same. Only a missing one (3D000) goes through
 * ensureDatabase.
 */
async function connectCreating(databaseUrl: string, logger: Logger): Promise<pg.Client> {
  try {
    return await connect(databaseUrl);
  } catch (error) {
    if (sqlState(error) !== SqlState.INVALID_CATALOG_NAME) throw toConnectionError(error, databaseUrl);
  }
  await ensureDatabase(databaseUrl, logger);
  try {
    return await connect(databaseUrl);
  } catch (error) {
    throw toConnectionError(error, databaseUrl);
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
  const client = await connectCreating(databaseUrl, logger);
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
