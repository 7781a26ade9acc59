/**
 * A gate without rate limiting, keys in turn: only for tests of the client itself. Every process
 * that talks to the service (worker, every CLI command, the demo) uses the Redis limiter
 * (src/jobs/limiter) through openServices, which spaces requests and parks exhausted keys.
 */
import type { ApiKeyConfig } from '../config.ts';
import { AbortedError, ConfigError } from '../errors.ts';
import type { AcquireOptions, Grant, RequestGate } from './gate.ts';

export function createStaticGate(keys: readonly ApiKeyConfig[]): RequestGate {
  if (keys.length === 0) throw new ConfigError('no API key configured');
  const grants: Grant[] = keys.map((k) => ({ key: k.key, fingerprint: k.fingerprint }));
  let next = 0;
  return {
    acquire(options?: AcquireOptions): Promise<Grant> {
      if (options?.signal?.aborted) return Promise.reject(new AbortedError());
      const grant = grants[next % grants.length] as Grant;
      next = (next + 1) % grants.length;
      return Promise.resolve(grant);
    },
    report(): Promise<void> {
      return Promise.resolve();
    },
    // Nothing is counted here, so a grant given back (never sent) has nothing to return.
    giveBack(): Promise<void> {
      return Promise.resolve();
    },
  };
}
