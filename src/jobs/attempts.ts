/**
 * Attributes the client's attempts to the slice that made them. The client reports every attempt
 * (retries included) through one hook; the runner opens a scope per page so those records are
 * committed with that page as request accounting.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AttemptRecord } from '../api-client/index.ts';

const scope = new AsyncLocalStorage<AttemptRecord[]>();

/** The client's onAttempt hook. Attempts outside any page scope are passed to `orphan`. */
export function collectAttempt(record: AttemptRecord, orphan?: (r: AttemptRecord) => void): void {
  const bucket = scope.getStore();
  if (bucket) bucket.push(record);
  else orphan?.(record);
}

/** Runs fn and returns what it returned with the attempts it made; on a throw the attempts ride on `attemptsOf`. */
export async function withAttempts<T>(fn: () => Promise<T>): Promise<{ value: T; attempts: AttemptRecord[] }> {
  const bucket: AttemptRecord[] = [];
  try {
    const value = await scope.run(bucket, fn);
    return { value, attempts: bucket };
  } catch (error) {
    if (error && typeof error === 'object') attemptsByError.set(error, bucket);
    throw error;
  }
}

const attemptsByError = new WeakMap<object, AttemptRecord[]>();

export function attemptsOf(error: unknown): AttemptRecord[] {
  if (!error || typeof error !== 'object') return [];
  return attemptsByError.get(error) ?? [];
}
