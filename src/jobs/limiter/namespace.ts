/**
 * Where per-key limiter state lives in Redis. The service counts a key's requests, not ours, so
 * every deployment that sends one key to one service must share that key's state, whatever its
 * HARVEST_REDIS_PREFIX; the same key string sent to another service (a simulator on another
 * port) is another counter.
 */
import { createHash } from 'node:crypto';

/** Namespace of per-key state when none is given: shared by every deployment, whatever its prefix. */
export const DEFAULT_KEY_NAMESPACE = 'harvest-limiter';

/** `harvest-limiter:<12 hex of the service origin's SHA-256>`: one namespace per service. */
export function keyNamespaceFor(baseUrl: string): string {
  let origin = baseUrl;
  try {
    origin = new URL(baseUrl).origin;
  } catch {
    // Config validates the URL; an unparsable one still gets a namespace of its own.
  }
  return `${DEFAULT_KEY_NAMESPACE}:${createHash('sha256').update(origin.toLowerCase()).digest('hex').slice(0, 12)}`;
}
