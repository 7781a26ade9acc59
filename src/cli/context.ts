/**
 * What every command shares: configuration, a logger that can never print a key, the services
 * opened on demand and always closed, and the exit code an action chooses.
 */
import { loadConfig, type Config } from '../config.ts';
import { createLogger, type Logger } from '../logger.ts';
import { openServices, type OpenServicesOptions, type Services } from '../jobs/services.ts';

export interface CliState {
  exitCode: number;
  /** The environment the command runs with: the entry passes `process.env`, tests their own object. */
  readonly env: NodeJS.ProcessEnv;
}

export interface CliRuntime {
  config: Config;
  logger: Logger;
}

/**
 * Config and logger. Unless HARVEST_LOG_LEVEL says otherwise, `quiet` lowers the default level to
 * warn (progress displays, tables) and `level` sets it (a command whose output already says every
 * outcome the logs would repeat).
 */
export function cliRuntime(state: CliState, options: { quiet?: boolean; level?: Config['logLevel'] } = {}): CliRuntime {
  const config = loadConfig(state.env);
  const level = config.logLevelSet ? config.logLevel : (options.level ?? (options.quiet ? 'warn' : config.logLevel));
  const logger = createLogger({ level, secrets: config.apiKeys.map((k) => k.key), name: 'harvest' });
  return { config, logger };
}

export async function withServices<T>(
  runtime: CliRuntime,
  fn: (services: Services) => Promise<T>,
  options: OpenServicesOptions = {},
): Promise<T> {
  const services = await openServices(runtime.config, runtime.logger, options);
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

/** Resolves on the first SIGINT/SIGTERM; the returned function removes the handlers. */
export function onShutdownSignal(handler: (signal: NodeJS.Signals) => void): () => void {
  const listener = (signal: NodeJS.Signals) => handler(signal);
  process.once('SIGINT', listener);
  process.once('SIGTERM', listener);
  return () => {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  };
}
