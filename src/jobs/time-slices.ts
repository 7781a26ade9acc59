/**
 * Pure arithmetic of search backfills: tweet ids encode their creation time (spec: ms =
 * (id >> 22) + 1288834974657), so a time range is an exact id range and slices can be cut with
 * `since_id:` (exclusive) and `max_id:` (inclusive) at millisecond precision, with no gap and no
 * overlap between neighbours.
 */
import { TWITTER_EPOCH_MS as EPOCH_MS } from '../store/snowflake.ts';

const TWITTER_EPOCH_MS = BigInt(EPOCH_MS);

/** The smallest tweet id created at or after `ms`. */
export function firstIdAtMs(ms: number): bigint {
  return (BigInt(Math.ceil(ms)) - TWITTER_EPOCH_MS) << 22n;
}

export function msOfId(id: string | bigint): number {
  return Number((BigInt(id) >> 22n) + TWITTER_EPOCH_MS);
}

export interface TimeRange {
  sinceMs: number;
  untilMs: number;
}

/**
 * Search operators selecting exactly the tweets created in [sinceMs, untilMs):
 * `since_id:` is exclusive, so it names the id just below the range; `max_id:` is inclusive.
 */
export function rangeOperators(range: Partial<TimeRange>): string {
  const parts: string[] = [];
  if (range.sinceMs !== undefined) parts.push(`since_id:${(firstIdAtMs(range.sinceMs) - 1n).toString()}`);
  if (range.untilMs !== undefined) parts.push(`max_id:${(firstIdAtMs(range.untilMs) - 1n).toString()}`);
  return parts.join(' ');
}

/** Splits [sinceMs, untilMs) into `count` contiguous ranges of equal length (whole ms). */
export function splitRange(range: TimeRange, count: number): TimeRange[] {
  const n = Math.max(1, Math.floor(count));
  const span = range.untilMs - range.sinceMs;
  if (span <= 0) return [];
  const parts = Math.min(n, span);
  const out: TimeRange[] = [];
  for (let i = 0; i < parts; i++) {
    const sinceMs = range.sinceMs + Math.floor((span * i) / parts);
    const untilMs = i === parts - 1 ? range.untilMs : range.sinceMs + Math.floor((span * (i + 1)) / parts);
    out.push({ sinceMs, untilMs });
  }
  return out;
}

/**
 * How many slices of one job should walk at once: enough requests in flight to keep the pooled
 * rate busy while each waits `latencyMs` for its answer (Little's law), with a quarter more for
 * jitter, and not more, because every slice's last partial page costs a request.
 */
export function targetParallelism(pooledRate: number, latencyMs: number, max = 64): number {
  const inFlight = (pooledRate * Math.max(latencyMs, 1)) / 1000;
  return Math.max(1, Math.min(max, Math.ceil(inFlight * 1.25) + 1));
}

/**
 * The most slices one job walks at once (pass it as targetParallelism's max): 64 at one key's 20 req/s and proportionally more with
 * more keys (10 keys at 200 req/s and 600 ms need ~151), so the cap bounds the partial last pages
 * of a job without capping its rate.
 */
export function parallelismCap(pooledRate: number): number {
  return Math.max(64, Math.ceil(pooledRate * 3.2));
}

/**
 * Where a walking slice should split to hand half of its remaining range to an idle worker:
 * the middle of [sinceMs, oldestSeenMs), or null when that remainder is too small to be worth a
 * second walk (less than a few pages' worth of time at the density seen so far).
 */
export function splitPoint(sinceMs: number, oldestSeenMs: number, msPerPage: number, minPages = 4): number | null {
  const remaining = oldestSeenMs - sinceMs;
  if (!(msPerPage > 0) || remaining < msPerPage * minPages * 2) return null;
  return sinceMs + Math.floor(remaining / 2);
}
