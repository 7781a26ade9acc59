import { describe, expect, it } from 'vitest';
import type { CanonicalTweet } from '../src/api-client/canonical.ts';
import { newestMs, oldestMs } from '../src/jobs/kinds/pages.ts';
import { firstIdAtMs, msOfId, rangeOperators, splitPoint, splitRange, targetParallelism } from '../src/jobs/time-slices.ts';

describe('time slices', () => {
  it('maps ids to time by the spec rule, above 2^53 exactly', () => {
    const id = '1850000000000000000';
    const ms = msOfId(id);
    expect(ms).toBe(Number((1850000000000000000n >> 22n) + 1288834974657n));
    expect(firstIdAtMs(ms) <= BigInt(id)).toBe(true);
    expect(firstIdAtMs(ms + 1) > BigInt(id)).toBe(true);
    expect(BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it('selects [since, until) exactly with since_id (exclusive) and max_id (inclusive)', () => {
    const range = { sinceMs: Date.UTC(2026, 9, 1), untilMs: Date.UTC(2026, 9, 2) };
    const ops = rangeOperators(range);
    const sinceId = BigInt(/since_id:(\d+)/.exec(ops)![1]!);
    const maxId = BigInt(/max_id:(\d+)/.exec(ops)![1]!);
    const firstOfRange = firstIdAtMs(range.sinceMs);
    const lastOfRange = firstIdAtMs(range.untilMs) - 1n;
    expect(firstOfRange > sinceId && firstOfRange - 1n === sinceId).toBe(true);
    expect(maxId).toBe(lastOfRange);
    expect(msOfId(maxId)).toBe(range.untilMs - 1);
  });

  it('splits a range into contiguous parts that cover it exactly', () => {
    const parts = splitRange({ sinceMs: 1000, untilMs: 1_000_999 }, 7);
    expect(parts).toHaveLength(7);
    expect(parts[0]!.sinceMs).toBe(1000);
    expect(parts.at(-1)!.untilMs).toBe(1_000_999);
    for (let i = 1; i < parts.length; i++) expect(parts[i]!.sinceMs).toBe(parts[i - 1]!.untilMs);
    expect(splitRange({ sinceMs: 5, untilMs: 5 }, 3)).toEqual([]);
    expect(splitRange({ sinceMs: 0, untilMs: 2 }, 10)).toHaveLength(2);
  });

  it('sizes parallelism by rate times latency', () => {
    expect(targetParallelism(20, 550)).toBe(Math.ceil(20 * 0.55 * 1.25) + 1);
    expect(targetParallelism(20, 0)).toBe(2);
    expect(targetParallelism(1000, 5000)).toBe(64);
  });

  it('splits only a remainder worth several pages', () => {
    expect(splitPoint(0, 1000, 100)).toBe(500);
    expect(splitPoint(0, 500, 100)).toBeNull();
    expect(splitPoint(0, 1000, 0)).toBeNull();
  });

  it('takes page times from the ids, to the millisecond, not from a whole-second created_at', () => {
    const at = Date.UTC(2026, 9, 1, 12, 0, 0, 750);
    const tweet = (ms: number) => ({ id: firstIdAtMs(ms).toString(), createdAt: new Date(Math.floor(ms / 1000) * 1000) }) as CanonicalTweet;
    const page = [tweet(at), tweet(at + 100)];
    expect(oldestMs(page)).toBe(at);
    expect(newestMs(page)).toBe(at + 100);
    expect(oldestMs([])).toBeNull();
  });
});
