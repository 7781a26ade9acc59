/**
 * A clean slate on every run, touching nothing but the demo's own database and Redis prefix:
 * probe Postgres and Redis (one line naming the one that is down, with how to start it), drop the
 * demo database and every key under the demo prefix, migrate, and open the services.
 */
import { loadConfig, type Config } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import { deletePrefixKeys } from '../../jobs/redis-keys.ts';
import { openServices, type Services } from '../../jobs/services.ts';
import { migrate, quoteIdent } from '../../store/migrate.ts';
import { withDatabase, type DemoOptions } from './options.ts';

export interface DemoTargets {
  /** DATABASE_URL of the user's environment: only its server and credentials are used. */
  databaseUrl: string;
  redisUrl: string;
}

export function demoConfig(targets: DemoTargets, options: DemoOptions, simulatorUrl: string, databaseName = options.database): Config {
  return loadConfig(
    {
      HARVEST_BASE_URL: simulatorUrl,
      HARVEST_API_KEYS: options.key,
      DATABASE_URL: withDatabase(targets.databaseUrl, databaseName),
      REDIS_URL: targets.redisUrl,
      HARVEST_REDIS_PREFIX: options.redisPrefix,
      HARVEST_RATE_PER_KEY: String(options.ratePerKey),
      // Quota syncs are per Harvester start; the demo starts one per step and needs no more.
      HARVEST_QUOTA_RECHECK_MS: '600000',
    },
    { dotenv: false },
  );
}

/** Probes both servers and wipes the demo's database and prefix; throws DatabaseUnavailableError or RedisUnavailableError naming the one that is down. */
export async function resetDemoState(targets: DemoTargets, options: DemoOptions, logger: Logger): Promise<void> {
  // The `postgres` maintenance database exists on every server; the demo database may not yet.
  const probe = await openServices(demoConfig(targets, options, 'http://127.0.0.1:1', 'postgres'), logger, { unmigrated: true });
  try {
    await probe.pool.query(`DROP DATABASE IF EXISTS ${quoteIdent(options.database)} WITH (FORCE)`);
    await deletePrefixKeys(probe.redis, options.redisPrefix);
  } finally {
    await probe.close();
  }
}

export async function openDemoServices(targets: DemoTargets, options: DemoOptions, simulatorUrl: string, logger: Logger): Promise<Services> {
  const config = demoConfig(targets, options, simulatorUrl);
  await migrate(config.databaseUrl, logger);
  return openServices(config, logger);
}
