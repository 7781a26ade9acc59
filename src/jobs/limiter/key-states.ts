/**
 * Reading the per-key state for `harvest status`, `keys` and the "every key refused" check: one
 * pipeline (the Redis TIME and two reads per key; every name shares one hash tag, so a cluster
 * runs it on one node) decoded into plain values. Read-only: grants and reports are the scripts'.
 */
import type { RedisConnection } from '../redis-keys.ts';
import type { KeyRedisNames } from './key-layout.ts';

export interface KeyState {
  fingerprint: string;
  /** Quota units left, or null before the first usage sync. */
  remaining: number | null;
  parkedUntil: Date | null;
  disabled: boolean;
  /** Why the key is parked or disabled: 'quota' (403/402/spent) or 'auth' (401). */
  reason: string | null;
  granted: number;
  rateLimited: number;
}

export async function readKeyStates(redis: RedisConnection, keys: readonly KeyRedisNames[]): Promise<KeyState[]> {
  const pipeline = redis.pipeline();
  pipeline.time();
  for (const names of keys) {
    pipeline.hmget(names.state, 'parkedUntil', 'disabled', 'reason', 'granted', 'rateLimited');
    pipeline.get(names.quota);
  }
  const replies = (await pipeline.exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
  const time = replies[0]?.[1] as [string, string];
  const nowUs = Number(time[0]) * 1_000_000 + Number(time[1]);
  return keys.map((names, i) => {
    const [parked, disabled, reason, granted, rateLimited] = replies[1 + 2 * i]?.[1] as (string | null)[];
    const quota = replies[2 + 2 * i]?.[1] as string | null;
    const parkedUs = parked ? Number(parked) : null;
    const isDisabled = disabled === '1';
    const isParked = parkedUs !== null && parkedUs > nowUs;
    return {
      fingerprint: names.fingerprint,
      remaining: quota === null ? null : Number(quota),
      parkedUntil: isParked ? new Date(Math.ceil(parkedUs / 1000)) : null,
      disabled: isDisabled,
      reason: isDisabled || isParked ? (reason ?? null) : null,
      granted: Number(granted ?? 0),
      rateLimited: Number(rateLimited ?? 0),
    };
  });
}
