/**
 * Where the limiter keeps its state in Redis, and why every name carries the same hash tag.
 *
 * One acquire is one Lua call that reads and writes the per-key state of every configured key,
 * the job's budget, the deployment's epoch and its watch waiters. On Redis Cluster a script may
 * only touch keys of one hash slot, so all of them carry the tag `{<ns>}` (Redis hashes only what
 * is inside the first braces of a name):
 *
 *   {<ns>}:key:<fp>                     per key (shared by every deployment that sends this key
 *   {<ns>}:quota:<fp>                    to this service, whatever its HARVEST_REDIS_PREFIX)
 *   <prefix>:{<ns>}:watch-waiting        per deployment: still under `<prefix>:` (so deleting a
 *   <prefix>:{<ns>}:epoch                 prefix removes them) but hashed by the namespace, since
 *   <prefix>:{<ns>}:budget:<jobId>        the prefix itself has no braces
 *   <prefix>:{<ns>}:once:<process>        per process: what its last spending calls did (lua.ts, ONCE)
 *
 * The cost: all limiter state of one service sits on one cluster node. It is small (two keys per
 * API key, one per job) and each grant is one script call, so a node serves it at thousands of
 * grants per second; BullMQ's queues, the bulk of the traffic, carry a tag of their own.
 */
import { ConfigError } from '../../errors.ts';

export interface KeyRedisNames {
  readonly fingerprint: string;
  readonly state: string;
  readonly quota: string;
}

export interface LimiterLayout {
  /** The hash tag every name carries, `{<ns>}`. */
  readonly tag: string;
  readonly watchWaiting: string;
  readonly epoch: string;
  budget(jobId: string): string;
  once(process: string): string;
  key(fingerprint: string): KeyRedisNames;
}

/**
 * Names for a deployment's limiter keys (`prefix`, e.g. `harvest:limiter`) and the per-key state
 * in namespace `ns`. Neither may hold braces: a brace in the prefix would become the hash tag.
 */
export function limiterLayout(prefix: string, ns: string): LimiterLayout {
  for (const [what, text] of [['prefix', prefix], ['key namespace', ns]] as const) {
    if (/[{}]/.test(text)) throw new ConfigError(`the limiter's ${what} must not contain braces: ${JSON.stringify(text)}`);
  }
  const tag = `{${ns}}`;
  const deployment = `${prefix}:${tag}`;
  return {
    tag,
    watchWaiting: `${deployment}:watch-waiting`,
    epoch: `${deployment}:epoch`,
    budget: (jobId) => `${deployment}:budget:${jobId}`,
    once: (process) => `${deployment}:once:${process}`,
    key: (fingerprint) => ({ fingerprint, state: `${tag}:key:${fingerprint}`, quota: `${tag}:quota:${fingerprint}` }),
  };
}
