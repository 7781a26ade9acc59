/**
 * pino everywhere. Secrets are removed by configuration: known key-bearing paths are redacted, and
 * every registered secret is scrubbed from every string of every line, whole or any run of it
 * (secret-scrub.ts), so a key pasted into an error message by a library, or echoed truncated by
 * the service, still never reaches a log.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';
import { prepareSecrets, scrubSecretRuns, type PreparedSecrets } from './secret-scrub.ts';

export type { Logger } from 'pino';

const REDACT_PATHS = [
  'apiKey',
  'key',
  'headers.ApiKey',
  'headers.apikey',
  '*.apiKey',
  '*.key',
  '*.headers.ApiKey',
  '*.headers.apikey',
];

export interface CreateLoggerOptions {
  level?: string;
  /** Values that must never appear in output (API keys). */
  secrets?: readonly string[];
  /** Pretty output for a person (defaults to stderr being a terminal). */
  pretty?: boolean;
  destination?: pino.DestinationStream;
  name?: string;
}

/** `value` with every run of a secret in its strings (see `MIN_SCRUBBED_RUN`) replaced by `[REDACTED]`. */
export function scrubSecrets(value: unknown, secrets: PreparedSecrets, depth = 0): unknown {
  if (secrets.patterns.length === 0 || depth > 8) return value;
  if (typeof value === 'string') return scrubSecretRuns(value, secrets, '[REDACTED]');
  if (Array.isArray(value)) return value.map((v) => scrubSecrets(v, secrets, depth + 1));
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrubSecrets(value.message, secrets),
      stack: scrubSecrets(value.stack, secrets),
      ...('code' in value ? { code: (value as { code: unknown }).code } : {}),
    };
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubSecrets(v, secrets, depth + 1);
    return out;
  }
  return value;
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  // Prepared once: this runs on every string of every line.
  const secrets = prepareSecrets(options.secrets ?? []);
  const pinoOptions: LoggerOptions = {
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    formatters: {
      log: (object) => scrubSecrets(object, secrets) as Record<string, unknown>,
    },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a) => scrubSecrets(a, secrets)) as Parameters<typeof method>);
      },
    },
    ...(options.name ? { name: options.name } : {}),
  };
  const pretty = options.pretty ?? (options.destination === undefined && process.stderr.isTTY === true);
  if (options.destination) return pino(pinoOptions, options.destination);
  if (pretty) {
    return pino({
      ...pinoOptions,
      transport: { target: 'pino-pretty', options: { destination: 2, colorize: true, translateTime: 'SYS:HH:MM:ss.l' } },
    });
  }
  return pino(pinoOptions, pino.destination({ dest: 2, sync: false }));
}

/** A logger that writes nothing: the default for library code called without one. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * A log call for an error that repeats while its cause lasts (a Redis that is away: BullMQ reports
 * every reconnect attempt of every queue and worker): the first is logged, the next ones at most
 * once per `intervalMs`, each with how many were left out since.
 */
export function throttledLog(log: (fields: object, message: string) => void, message: string, intervalMs = 30_000, now: () => number = Date.now): (fields: object) => void {
  let lastAt = -Infinity;
  let skipped = 0;
  return (fields) => {
    const at = now();
    if (at - lastAt < intervalMs) {
      skipped++;
      return;
    }
    log(skipped > 0 ? { ...fields, repeated: skipped } : fields, message);
    lastAt = at;
    skipped = 0;
  };
}
