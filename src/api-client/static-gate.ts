/**
 * A gate without rate limiting for the CLI's one-off calls and for tests: keys in turn. Workers
 * use the Redis limiter (src/jobs) instead, which spaces requests and parks exhausted keys.
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
  };
}
