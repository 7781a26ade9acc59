import { createHash } from 'node:crypto';

/**
 * A key's public name: the first 12 hex digits of its SHA-256. Job data, logs, metrics and
 * Postgres name keys by this; the key itself never leaves the process that was configured with it.
 */
export function keyFingerprint(key: string): string {
  return `k_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}
